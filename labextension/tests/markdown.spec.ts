import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { renderMarkdown, renderMarkdownSafe } from '../src/markdown';
import { buildRunView } from '../src/model';
import { fixture, texts } from './helpers';

const finalText = (): string =>
  buildRunView(fixture('every_tool_session').events).finished?.final_text ?? '';

describe('renderMarkdownSafe', () => {
  it('renders the final answer of a real run: bold, code and a list', () => {
    const root = renderMarkdownSafe(finalText());
    expect(texts(root, 'strong')).toEqual(['floats']);
    expect(texts(root, 'li')).toHaveLength(2);
    expect(texts(root, 'li code')).toEqual([
      'Cart.total()',
      '0.0',
      'total_with_discount()',
      'round(x, 2)'
    ]);
  });

  it('never turns text into markup, and links only http(s) and mailto', () => {
    const root = renderMarkdownSafe(finalText());
    expect(root.querySelector('script')).toBeNull();
    expect(root.textContent).toContain('<script>alert("not run")</script>');
    expect(root.querySelector('a')).toBeNull();
    expect(root.textContent).toContain('docs');
    const linked = renderMarkdownSafe(
      '[site](https://example.org) <img src=x onerror=alert(1)>'
    );
    expect(linked.querySelector('a')?.getAttribute('href')).toBe(
      'https://example.org'
    );
    expect(linked.querySelector('a')?.rel).toBe('noopener noreferrer');
    expect(linked.querySelector('img')).toBeNull();
  });

  it('renders headings, fenced code with colour, quotes and rules', () => {
    const root = renderMarkdownSafe(
      '# Plan\n\n```python\ndef f():\n    return 1\n```\n> quoted\n\n---\n1. one\n2. two'
    );
    expect(root.querySelector('h3')?.textContent).toBe('Plan');
    expect(root.querySelector('pre code')?.textContent).toBe(
      'def f():\n    return 1'
    );
    expect(texts(root, 'pre .anb-tok-keyword')).toEqual(['def', 'return']);
    expect(root.querySelector('blockquote')?.textContent).toBe('quoted');
    expect(root.querySelector('hr')).not.toBeNull();
    expect(texts(root, 'ol li')).toEqual(['one', 'two']);
  });
});

describe('renderMarkdown', () => {
  it("uses JupyterLab's parser and always its sanitizer when both are given", async () => {
    const seen: string[] = [];
    const markdownParser: IRenderMime.IMarkdownParser = {
      render: async source =>
        `<p>${source}</p><script>bad()</script><a href="https://x.org">x</a>`
    };
    const sanitizer: IRenderMime.ISanitizer = {
      sanitize: (dirty: string) => {
        seen.push(dirty);
        return dirty.replace(/<script>.*<\/script>/, '');
      }
    };
    const root = await renderMarkdown('hello', { markdownParser, sanitizer });
    expect(seen).toHaveLength(1);
    expect(root.querySelector('script')).toBeNull();
    expect(root.querySelector('p')?.textContent).toBe('hello');
    expect(root.querySelector('a')?.target).toBe('_blank');
  });

  it('falls back to the safe renderer without a sanitizer or when the parser fails', async () => {
    const markdownParser: IRenderMime.IMarkdownParser = {
      render: async () => '<script>bad()</script>'
    };
    const noSanitizer = await renderMarkdown('**x**', { markdownParser });
    expect(noSanitizer.querySelector('strong')?.textContent).toBe('x');
    const failing: IRenderMime.IMarkdownParser = {
      render: async () => {
        throw new Error('parser broke');
      }
    };
    const sanitizer: IRenderMime.ISanitizer = { sanitize: dirty => dirty };
    const fallback = await renderMarkdown('*y*', {
      markdownParser: failing,
      sanitizer
    });
    expect(fallback.querySelector('em')?.textContent).toBe('y');
  });
});
