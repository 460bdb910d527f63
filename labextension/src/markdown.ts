/**
 * The assistant's text as Markdown. Inside JupyterLab it goes through the
 * application's Markdown parser and then its HTML sanitizer; elsewhere (and when
 * either is missing) a small built-in renderer builds DOM nodes directly, so raw
 * HTML in the text shows as text and only http(s) and mailto links become links.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { h } from './dom';
import { appendHighlighted, languageForName } from './highlight';

/** What the renderer needs from JupyterLab to use its own Markdown. */
export interface IMarkdownServices {
  markdownParser?: IRenderMime.IMarkdownParser | null;
  sanitizer?: IRenderMime.ISanitizer | null;
}

const SAFE_LINK = /^(https?:|mailto:)/i;
const INLINE =
  /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;

/** Append inline Markdown (code, bold, italic, links) to `parent` as DOM nodes. */
export function appendInline(parent: HTMLElement, text: string): void {
  let last = 0;
  INLINE.lastIndex = 0;
  for (let match = INLINE.exec(text); match; match = INLINE.exec(text)) {
    if (match.index > last) {
      parent.append(text.slice(last, match.index));
    }
    const [, , code, bold, bold2, em, em2, label, href] = match;
    if (code !== undefined) {
      parent.append(h('code', '', code.trim()));
    } else if (bold !== undefined || bold2 !== undefined) {
      const strong = h('strong', '');
      appendInline(strong, bold ?? bold2);
      parent.append(strong);
    } else if (em !== undefined || em2 !== undefined) {
      const italic = h('em', '');
      appendInline(italic, em ?? em2);
      parent.append(italic);
    } else if (label !== undefined) {
      if (SAFE_LINK.test(href)) {
        const link = h('a', '', label);
        link.href = href;
        link.target = '_blank';
        link.rel = 'noopener noreferrer';
        parent.append(link);
      } else {
        parent.append(label);
      }
    }
    last = match.index + match[0].length;
    INLINE.lastIndex = last;
  }
  if (last < text.length) {
    parent.append(text.slice(last));
  }
}

const FENCE = /^\s*(```+|~~~+)\s*([\w+-]*)/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const ORDERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const HEADING_TAGS = ['h3', 'h4', 'h5', 'h6', 'h6', 'h6'] as const;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;

function isBlockStart(line: string): boolean {
  return [FENCE, HEADING, BULLET, ORDERED, QUOTE, RULE].some(re =>
    re.test(line)
  );
}

/** Render Markdown to DOM nodes without ever parsing HTML. */
export function renderMarkdownSafe(text: string): HTMLElement {
  const root = h('div', 'anb-markdown');
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence !== null) {
      const close = fence[1];
      const language = languageForName(fence[2]);
      const code = h('code', '');
      const body: string[] = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(close)) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1;
      body.forEach((codeLine, index) => {
        appendHighlighted(code, codeLine, language);
        if (index < body.length - 1) {
          code.append('\n');
        }
      });
      root.append(h('pre', 'anb-code-block', code));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading !== null) {
      // Headings start at h3 and stop at h6, so a message's "# Title" does not outshout the notebook.
      const node = h(HEADING_TAGS[heading[1].length - 1], '');
      appendInline(node, heading[2]);
      root.append(node);
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      root.append(h('hr', ''));
      i += 1;
      continue;
    }
    const listRe = BULLET.test(line)
      ? BULLET
      : ORDERED.test(line)
        ? ORDERED
        : null;
    if (listRe !== null) {
      const list = h(listRe === BULLET ? 'ul' : 'ol', '');
      while (i < lines.length && listRe.test(lines[i])) {
        const item = h('li', '');
        appendInline(item, (listRe.exec(lines[i]) ?? ['', ''])[1]);
        list.append(item);
        i += 1;
      }
      root.append(list);
      continue;
    }
    if (QUOTE.test(line)) {
      const quote = h('blockquote', '');
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        quoted.push((QUOTE.exec(lines[i]) ?? ['', ''])[1]);
        i += 1;
      }
      appendInline(quote, quoted.join(' '));
      root.append(quote);
      continue;
    }
    if (line.trim() === '') {
      i += 1;
      continue;
    }
    const paragraph: string[] = [];
    while (
      i < lines.length &&
      lines[i].trim() !== '' &&
      (paragraph.length === 0 || !isBlockStart(lines[i]))
    ) {
      paragraph.push(lines[i].trim());
      i += 1;
    }
    const p = h('p', '');
    appendInline(p, paragraph.join(' '));
    root.append(p);
  }
  return root;
}

/**
 * Render Markdown with JupyterLab's parser and sanitizer when both are given,
 * otherwise with the built-in safe renderer.
 */
export async function renderMarkdown(
  text: string,
  services: IMarkdownServices = {}
): Promise<HTMLElement> {
  const { markdownParser, sanitizer } = services;
  if (markdownParser && sanitizer) {
    try {
      const html = await markdownParser.render(text);
      const root = h('div', 'anb-markdown jp-RenderedMarkdown');
      root.innerHTML = sanitizer.sanitize(html);
      for (const link of Array.from(root.querySelectorAll('a'))) {
        link.target = '_blank';
        link.rel = 'noopener noreferrer';
      }
      return root;
    } catch {
      // Fall through to the built-in renderer.
    }
  }
  return renderMarkdownSafe(text);
}
