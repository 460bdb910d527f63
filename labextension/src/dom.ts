/**
 * Small DOM and formatting helpers. Text always goes in through `textContent`,
 * never `innerHTML`, so nothing in a transcript can inject markup.
 */

import { visible } from './visible';

type Child = Node | string | null | undefined | false;

/** Create an element with classes and children (strings become text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    node.append(
      typeof child === 'string' ? document.createTextNode(child) : child
    );
  }
  return node;
}

/** A `<details>` card: collapsible, keyboard-accessible, no script needed. */
export function card(
  className: string,
  summary: Child[],
  open: boolean,
  ...body: Child[]
): HTMLDetailsElement {
  const details = h(
    'details',
    className,
    h('summary', '', ...summary),
    ...body
  );
  details.open = open;
  return details;
}

/** A status pill such as "approved" or "denied". */
export function badge(text: string, kind: string): HTMLSpanElement {
  return h('span', `anb-badge anb-badge-${kind}`, text);
}

/** `0.0006` → `0.6 ms`, `3.56` → `3.56 s`, `95` → `1 m 35 s`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) {
    return '';
  }
  if (seconds < 1) {
    const ms = seconds * 1000;
    return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  }
  if (seconds < 60) {
    return `${seconds.toFixed(2)} s`;
  }
  const minutes = Math.floor(seconds / 60);
  return `${minutes} m ${Math.round(seconds - minutes * 60)} s`;
}

/** `14118` → `14,118`. */
export function formatTokens(tokens: number): string {
  return Math.round(tokens).toLocaleString('en-US');
}

/**
 * Tokens, the share the provider's prompt cache served and the share spent
 * thinking, as the Python renderer writes them: `12,400`,
 * `12,400, 9,800 cached` or `12,400, 9,800 cached, 1,200 thinking`.
 */
export function formatTokensCached(
  tokens: number,
  cached: number,
  thinking = 0
): string {
  let text = formatTokens(tokens);
  text += cached > 0 ? `, ${formatTokens(cached)} cached` : '';
  return thinking > 0 ? `${text}, ${formatTokens(thinking)} thinking` : text;
}

/** Dollars with enough digits for small runs: `$0.0042`, `$1.25`. */
export function formatCost(usd: number, priced = true): string {
  if (!priced && usd === 0) {
    return 'not priced';
  }
  if (usd === 0) {
    return '$0.00';
  }
  return usd < 0.01 ? `$${usd.toPrecision(2)}` : `$${usd.toFixed(2)}`;
}

/** Pre-formatted text, collapsed to its first lines behind a "show all" button when long. */
export function longText(
  text: string,
  className: string,
  maxLines = 30
): HTMLElement {
  text = visible(text);
  const lines = text.split('\n');
  const pre = h('pre', className);
  if (lines.length <= maxLines) {
    pre.textContent = text;
    return pre;
  }
  pre.textContent = lines.slice(0, maxLines).join('\n');
  const more = h(
    'button',
    'anb-more',
    `Show all ${lines.length.toLocaleString('en-US')} lines`
  );
  more.type = 'button';
  more.addEventListener('click', () => {
    pre.textContent = text;
    more.remove();
  });
  return h('div', 'anb-long', pre, more);
}
