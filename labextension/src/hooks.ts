/** Hook results of one tool call: pass or fail, and the output, collapsed when long. */

import { badge, card, formatDuration, h, longText } from './dom';
import type { IHookResult } from './types';

/** Outputs longer than this many lines start collapsed. */
export const HOOK_OUTPUT_LINES = 8;

export function renderHook(hook: IHookResult): HTMLElement {
  const status = hook.passed
    ? badge('passed', 'ok')
    : badge('failed', 'failed');
  const summary = [
    h('span', 'anb-hook-name', hook.name),
    hook.event ? h('span', 'anb-muted', hook.event) : null,
    status,
    !hook.passed
      ? h(
          'span',
          'anb-muted',
          hook.warning ||
            (hook.exit_code !== null ? `exit ${hook.exit_code}` : '')
        )
      : null,
    hook.duration_s !== null
      ? h('span', 'anb-muted', formatDuration(hook.duration_s))
      : null
  ];
  const output = hook.output.trimEnd();
  const lines = output ? output.split('\n').length : 0;
  const open = lines > 0 && lines <= HOOK_OUTPUT_LINES;
  return card(
    `anb-hook ${hook.passed ? 'anb-hook-passed' : 'anb-hook-failed'}`,
    summary,
    open,
    output
      ? longText(output, 'anb-output', 200)
      : h('div', 'anb-muted', 'No output.')
  );
}

export function renderHooks(hooks: readonly IHookResult[]): HTMLElement | null {
  if (hooks.length === 0) {
    return null;
  }
  const failed = hooks.filter(hook => !hook.passed).length;
  const title = failed
    ? `Hooks: ${failed} of ${hooks.length} failed`
    : `Hooks: ${hooks.length} passed`;
  return h(
    'div',
    'anb-hooks',
    h('div', 'anb-section-title', title),
    ...hooks.map(renderHook)
  );
}
