/**
 * The run timeline: a header with the task, one collapsible card per step and
 * per tool call (a call that changed the person's variables says which, under
 * its card; a step that changed files lists them; one that changed files or
 * variables offers a rewind), and a summary with the final status, tokens,
 * cost and the review list.
 */

import {
  badge,
  card,
  formatCost,
  formatDuration,
  formatTokens,
  formatTokensCached,
  h,
  longText
} from './dom';
import { renderDiff } from './diffview';
import { renderHooks } from './hooks';
import { IMarkdownServices, renderMarkdown } from './markdown';
import {
  buildRunView,
  CallStatus,
  ICallView,
  IRunView,
  IStepView,
  ITodoItem
} from './model';
import { appendHighlighted, languageForName } from './highlight';
import { IInspection, meterText, renderInspection } from './inspector';
import type {
  IRunPayload,
  IRunWarning,
  IStateChange,
  IThreadInfo,
  IToolImage
} from './types';
import { RunControls } from './review';
import { IUndoRunner, visiblePath } from './undo';
import { visible } from './visible';

/** The badge style of each call status. */
const STATUS_STYLE: Record<CallStatus, string> = {
  approved: 'ok',
  ran: 'ok',
  denied: 'denied',
  blocked: 'blocked',
  'dry-run': 'dryrun',
  failed: 'failed',
  aborted: 'failed',
  skipped: 'pending',
  'needs a person': 'denied',
  invalid: 'failed',
  pending: 'pending'
};

const RUN_STATUS_STYLE: Record<string, string> = {
  success: 'ok',
  partial: 'partial',
  failed: 'failed'
};

/** Arguments shown in a call's one-line summary, in order of preference. */
const SUMMARY_KEYS = ['path', 'command', 'pattern', 'query', 'glob', 'url'];

function oneLine(text: string, limit = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}

function showValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** The call's most telling argument, for its summary line. */
export function argumentSummary(args: Record<string, unknown>): string {
  const key = SUMMARY_KEYS.find(name => typeof args[name] === 'string');
  if (key !== undefined) {
    return oneLine(String(args[key]));
  }
  const first = Object.entries(args)[0];
  return first === undefined
    ? ''
    : oneLine(`${first[0]}=${showValue(first[1])}`);
}

/** Code a tool runs (run_python's `code`), whole and coloured. */
function renderCode(code: string): HTMLElement {
  const pre = h('pre', 'anb-code-block');
  const python = languageForName('python');
  code.split('\n').forEach((line, index) => {
    if (index > 0) {
      pre.append('\n');
    }
    appendHighlighted(pre, line, python);
  });
  return pre;
}

function renderImages(images: readonly IToolImage[]): HTMLElement | null {
  if (images.length === 0) {
    return null;
  }
  const box = h('div', 'anb-images');
  for (const image of images) {
    const img = document.createElement('img');
    img.className = 'anb-image';
    img.alt = image.alt;
    img.title = image.alt;
    img.src = `data:image/png;base64,${image.data}`;
    box.append(img);
  }
  return box;
}

function renderArguments(args: Record<string, unknown>): HTMLElement | null {
  const code = typeof args.code === 'string' ? args.code : null;
  const entries = Object.entries(args).filter(
    ([key, value]) => value !== null && !(key === 'code' && code !== null)
  );
  const list = h('dl', 'anb-args');
  for (const [key, value] of entries) {
    const text = showValue(value);
    const multiline = text.includes('\n') || text.length > 100;
    list.append(
      h('dt', '', key),
      h(
        'dd',
        '',
        multiline ? longText(text, 'anb-arg-value', 12) : h('code', '', text)
      )
    );
  }
  if (entries.length === 0 && code === null) {
    return null;
  }
  return h(
    'div',
    'anb-section',
    h('div', 'anb-section-title', 'Arguments'),
    entries.length > 0 ? list : null,
    code !== null ? renderCode(code) : null
  );
}

function renderConfirmation(call: ICallView): HTMLElement | null {
  const { asked, answered } = call;
  if (asked === null && answered === null) {
    return null;
  }
  const parts: Array<Node | string> = [];
  if (asked !== null) {
    parts.push(
      'Asked for confirmation',
      asked.sensitivity ? ` (${asked.sensitivity})` : '',
      asked.reasons.length ? `: ${asked.reasons.join('; ')}` : ''
    );
  }
  if (answered !== null) {
    const decision =
      answered.decision === 'approve'
        ? badge('approved', 'ok')
        : badge(
            answered.decision === 'deny' ? 'denied' : answered.decision,
            'denied'
          );
    parts.push(
      h(
        'div',
        'anb-answer',
        'Answer: ',
        decision,
        answered.reason ? ` — ${answered.reason}` : ''
      )
    );
  }
  return h('div', 'anb-section anb-confirmation', ...parts);
}

function callDiff(call: ICallView): { text: string; title: string } | null {
  if (call.result?.diff) {
    const title =
      call.status === 'dry-run' ? 'Diff (not applied: dry run)' : 'Diff';
    return { text: call.result.diff, title };
  }
  if (call.asked?.preview) {
    const applied = call.status === 'approved' || call.status === 'ran';
    return {
      text: call.asked.preview,
      title: applied ? 'Diff' : 'Proposed change (not applied)'
    };
  }
  return null;
}

/** Whether a command ran in the OS sandbox; nothing for other tools. */
function renderSandbox(sandboxed: boolean | null): HTMLElement | null {
  if (sandboxed === null) {
    return null;
  }
  return h(
    'span',
    `anb-sandbox anb-sandbox-${sandboxed ? 'on' : 'off'}`,
    sandboxed ? 'sandboxed' : 'not sandboxed'
  );
}

/** Arguments the model wrote that could not be read: shown as sent, since the call was not run. */
function renderRawArguments(raw: string | null): HTMLElement | null {
  if (raw === null) {
    return null;
  }
  return h(
    'div',
    'anb-section anb-raw-args',
    h('div', 'anb-section-title', 'The arguments as the model sent them'),
    raw
      ? longText(raw, 'anb-arg-value', 12)
      : h('span', 'anb-muted', '(nothing)')
  );
}

/** "Thinking (12 words)": what the model thought before a step, folded. */
export function thinkingTitle(text: string): string {
  const words = text.split(/\s+/).filter(Boolean).length;
  return `Thinking (${words.toLocaleString('en-US')} word${words === 1 ? '' : 's'})`;
}

function renderThinking(text: string): HTMLDetailsElement | null {
  if (!text.trim()) {
    return null;
  }
  return card(
    'anb-thinking',
    [h('span', 'anb-thinking-title', thinkingTitle(text))],
    false,
    longText(text.trim(), 'anb-thinking-text', 40)
  );
}

/** One tool call: its summary line, and arguments, answer, output, diff and hooks. */
export function renderCall(call: ICallView): HTMLDetailsElement {
  const { result } = call;
  const diff = callDiff(call);
  const summary = [
    h('span', 'anb-tool', call.tool),
    h('span', 'anb-call-arg', argumentSummary(call.arguments)),
    badge(call.status, STATUS_STYLE[call.status]),
    result !== null
      ? h('span', 'anb-muted', formatDuration(result.duration_s))
      : null,
    renderSandbox(result?.sandboxed ?? null)
  ];
  const quiet = call.status === 'ran' || call.status === 'approved';
  const body: Array<HTMLElement | null> = [
    renderArguments(call.arguments),
    renderRawArguments(call.rawArguments),
    renderConfirmation(call)
  ];
  if (result?.error) {
    body.push(longText(result.error, 'anb-error', 20));
  }
  if (result?.output) {
    // With a diff below, the output (which often repeats it) starts folded.
    const lines = result.output.split('\n').length;
    body.push(
      card(
        'anb-output-card',
        [
          h(
            'span',
            'anb-section-title',
            `Output (${lines} line${lines === 1 ? '' : 's'})`
          )
        ],
        diff === null,
        longText(result.output, 'anb-output', 30)
      )
    );
  }
  if (diff !== null) {
    body.push(
      h(
        'div',
        'anb-section',
        h('div', 'anb-section-title', diff.title),
        renderDiff(diff.text)
      )
    );
  }
  body.push(result !== null ? renderImages(result.images) : null);
  body.push(result !== null ? renderHooks(result.hooks) : null);
  const details = card(
    `anb-call anb-call-${STATUS_STYLE[call.status]}`,
    summary,
    !quiet || diff !== null || (result?.hooks.length ?? 0) > 0,
    ...body
  );
  details.dataset.callId = call.callId;
  details.dataset.status = call.status;
  return details;
}

/**
 * One changed variable, worded as the Python renderer words it (`_variable` in
 * architect_nb/notebook/output/event_view.py), with why undo cannot restore it:
 * "df mutated (DataFrame 3×2 → 3×3)", "items added (list, len 3)",
 * "rows mutated (generator → may have changed) (not undoable: a generator cannot be copied)".
 */
export function describeVariable(change: IStateChange): string {
  const words =
    change.kind === 'added'
      ? change.after
      : change.kind === 'deleted'
        ? change.before
        : `${change.before} → ${change.after}`;
  const text = `${change.name} ${change.kind} (${words})`;
  if (change.restorable) {
    return text;
  }
  return change.why
    ? `${text} (not undoable: ${change.why})`
    : `${text} (not undoable)`;
}

/** "Your variables: df mutated (…), items added (…)": under a call that changed them, seen folded or not. */
export function renderCallVariables(call: ICallView): HTMLElement | null {
  const changes = call.result?.changed_state ?? [];
  if (changes.length === 0) {
    return null;
  }
  const line = h('div', 'anb-muted anb-call-variables', 'Your variables: ');
  changes.forEach((change, index) => {
    if (index > 0) {
      line.append(', ');
    }
    const item = h('code', '', visible(describeVariable(change)));
    item.dataset.kind = change.kind;
    item.dataset.restorable = String(change.restorable);
    line.append(item);
  });
  line.dataset.callId = call.callId;
  return line;
}

function renderWarnings(warnings: readonly IRunWarning[]): HTMLElement | null {
  if (warnings.length === 0) {
    return null;
  }
  return h(
    'ul',
    'anb-warnings',
    ...warnings.map(w =>
      h('li', '', badge(w.category, 'warning'), ' ', w.message)
    )
  );
}

/**
 * The files a step changed, and its "Rewind to before this step" (also on a
 * step that changed only variables: its calls' lines say which).
 */
function renderStepFiles(
  step: IStepView,
  controls: RunControls
): HTMLElement | null {
  const files = step.changedFiles;
  const rewind = controls.rewindFor(step.step)?.node ?? null;
  if (files.length === 0 && rewind === null) {
    return null;
  }
  return h(
    'div',
    'anb-section anb-step-files',
    files.length > 0
      ? h('div', 'anb-section-title', 'Files changed in this step')
      : null,
    files.length > 0
      ? h(
          'ul',
          'anb-files',
          ...files.map(path => h('li', '', h('code', '', visiblePath(path))))
        )
      : null,
    rewind
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Fetches one step's request and reply from the kernel, or null where no kernel can be reached. */
type Inspect = (step: number, node: HTMLElement) => Promise<IInspection>;

/**
 * The step's model call: how many messages it got and how full the window
 * was, and a "What the model saw" block that fetches the whole request from
 * the kernel when first opened.
 */
export function renderModelCall(
  step: IStepView,
  inspect: Inspect | null
): HTMLElement | null {
  const request = step.request;
  if (request === null) {
    return null;
  }
  const line = `the model got ${plural(request.messages, 'message')} (${request.newMessages} new)`;
  const meter = meterText(request.meter);
  const body = h('div', 'anb-inspect-body');
  const block = h(
    'details',
    'anb-model-call',
    h('summary', 'anb-muted', `What the model saw: ${line}`),
    meter ? h('div', 'anb-muted anb-step-meter', meter) : null,
    request.meter?.compressed
      ? h('div', 'anb-warning', request.meter.compressed)
      : null,
    body
  );
  let fetched = false;
  block.addEventListener('toggle', () => {
    if (!block.open || fetched) {
      return;
    }
    fetched = true;
    if (inspect === null) {
      body.replaceChildren(
        h(
          'div',
          'anb-muted',
          `The whole request is in the run's transcript: %architect inspect RUN:${step.step} in the kernel that ran it.`
        )
      );
      return;
    }
    body.replaceChildren(h('div', 'anb-muted', 'Asking the kernel…'));
    void inspect(step.step, block).then(found => {
      body.replaceChildren(
        found.ok
          ? renderInspection(found.data)
          : h('div', 'anb-undo-error', found.message)
      );
    });
  });
  return block;
}

async function renderStep(
  step: IStepView,
  services: IMarkdownServices,
  controls: RunControls,
  inspect: Inspect | null = null
): Promise<HTMLDetailsElement> {
  const counts = step.calls.map(call =>
    badge(call.tool, STATUS_STYLE[call.status])
  );
  const summary = [
    h('span', 'anb-step-title', `Step ${step.step}`),
    ...counts,
    step.cost !== null
      ? h(
          'span',
          'anb-muted anb-step-tokens',
          `${formatTokens(step.cost.prompt_tokens + step.cost.completion_tokens)} tokens`
        )
      : null,
    step.changedFiles.length > 0
      ? h(
          'span',
          'anb-muted anb-step-changed',
          `${plural(step.changedFiles.length, 'file')} changed`
        )
      : null,
    step.changedVariables.length > 0
      ? h(
          'span',
          'anb-muted anb-step-changed anb-step-changed-variables',
          `${plural(step.changedVariables.length, 'variable')} changed`
        )
      : null
  ];
  const text = step.text.trim()
    ? await renderMarkdown(step.text, services)
    : null;
  const details = card(
    'anb-step',
    summary,
    true,
    renderModelCall(step, inspect),
    renderThinking(step.thinking),
    text,
    ...step.calls.flatMap(call => [
      renderCall(call),
      renderCallVariables(call)
    ]),
    renderWarnings(step.warnings),
    renderStepFiles(step, controls)
  );
  details.dataset.step = String(step.step);
  return details;
}

function renderHeader(view: IRunView): HTMLElement {
  const started = view.started;
  if (started === null) {
    return h(
      'div',
      'anb-run-header',
      h('span', 'anb-run-title', 'architect run')
    );
  }
  const meta = [
    started.model,
    started.mode,
    started.agent !== 'build' ? started.agent : ''
  ]
    .filter(Boolean)
    .join(' · ');
  const thread = renderThread(started.thread);
  const files = started.instructions ?? [];
  const instructions = files.length
    ? h(
        'div',
        'anb-muted anb-run-instructions',
        `Instructions: ${files.join(', ')}`
      )
    : null;
  return h(
    'div',
    'anb-run-header',
    h('span', 'anb-run-title', 'architect'),
    started.dry_run ? badge('dry run', 'dryrun') : null,
    h('span', 'anb-task', started.task || "(carries on from the fork's step)"),
    h('div', 'anb-muted anb-run-meta', meta),
    thread,
    instructions,
    view.lastMeter !== null
      ? h('div', 'anb-muted anb-run-meter', meterText(view.lastMeter))
      : null
  );
}

function shortId(runId: string): string {
  return runId.length > 8 ? `${runId.slice(0, 6)}…` : runId;
}

/** The conversation the run continues: "continues run ab12…, thread `refactor` · 2 earlier runs, ...". */
export function threadSummary(thread: IThreadInfo): string {
  const name = `thread \`${thread.name}\``;
  let where: string;
  if (thread.forked_from !== null) {
    where = `forked from ${thread.forked_from} into ${name}`;
  } else if (thread.follows_run !== null) {
    where = `continues run ${shortId(thread.follows_run)}, ${name}`;
  } else {
    return `new ${name}`;
  }
  const size = [
    plural(thread.runs, 'earlier run'),
    plural(thread.turns, 'turn'),
    `~${formatTokens(thread.context_tokens)} tokens of context`
  ].join(', ');
  const cost =
    thread.cost_usd > 0 ? `, ${formatCost(thread.cost_usd)} so far` : '';
  return `${where} · ${size}${cost}`;
}

function renderThread(thread: IThreadInfo | null): HTMLElement | null {
  if (thread === null) {
    return null;
  }
  const line = h('div', 'anb-muted anb-run-thread', threadSummary(thread));
  line.title = thread.follows_run
    ? `Run ${thread.follows_run}; thread id ${thread.id}`
    : `Thread id ${thread.id}`;
  return line;
}

function fact(label: string, value: string | Node): HTMLElement {
  return h('span', 'anb-fact', h('span', 'anb-fact-label', label), value);
}

const TODO_SIGNS: Record<string, string> = {
  pending: '☐',
  in_progress: '◐',
  done: '☑'
};

/** "2 of 5 done". */
export function todoDone(items: readonly ITodoItem[]): string {
  return `${items.filter(item => item.status === 'done').length} of ${items.length} done`;
}

/** The model's checklist, under the header: done items struck through, the one in progress in bold. */
export function renderTodo(items: readonly ITodoItem[]): HTMLElement | null {
  if (!items.length) {
    return null;
  }
  const rows = items.map(item => {
    const text =
      item.status === 'done'
        ? h('s', '', item.text)
        : item.status === 'in_progress'
          ? h('b', '', item.text)
          : h('span', '', item.text);
    return h(
      'li',
      `anb-todo-${item.status}`,
      `${TODO_SIGNS[item.status]} `,
      text
    );
  });
  return h(
    'div',
    'anb-todo',
    h('div', 'anb-muted anb-todo-title', `Todo · ${todoDone(items)}`),
    h('ul', 'anb-todo-items', ...rows)
  );
}

function renderSummary(view: IRunView, controls: RunControls): HTMLElement {
  const done = view.finished;
  if (done === null) {
    const cost = view.lastCost;
    return h(
      'div',
      'anb-summary',
      badge('running', 'pending'),
      cost !== null
        ? fact(
            'tokens',
            formatTokensCached(
              cost.total_tokens,
              cost.total_cached_tokens,
              cost.total_reasoning_tokens
            )
          )
        : null,
      cost !== null
        ? fact('cost', formatCost(cost.total_cost_usd, cost.priced))
        : null
    );
  }
  const priced = view.lastCost?.priced ?? done.total_cost_usd > 0;
  // What undo does not cover (files over the size limit, calls with no snapshot).
  const note = done.undo_note;
  // With a review list, the list is the files; older transcripts have only the names.
  const files =
    done.files_changed.length && controls.review === null
      ? h(
          'ul',
          'anb-files',
          ...done.files_changed.map(f => h('li', '', h('code', '', f)))
        )
      : null;
  return h(
    'div',
    `anb-summary anb-summary-${RUN_STATUS_STYLE[done.status] ?? 'pending'}`,
    h(
      'div',
      'anb-summary-line',
      badge(done.status, RUN_STATUS_STYLE[done.status] ?? 'pending'),
      h('span', 'anb-summary-message', done.message),
      fact('stop', done.stop_reason),
      view.todo.length ? fact('todo', todoDone(view.todo)) : null,
      fact('steps', String(done.steps)),
      fact(
        'tokens',
        formatTokensCached(
          done.total_tokens,
          done.total_cached_tokens,
          done.total_reasoning_tokens
        )
      ),
      fact('cost', formatCost(done.total_cost_usd, priced)),
      fact('time', formatDuration(done.duration_s))
    ),
    files !== null ? h('div', 'anb-section-title', 'Files changed') : null,
    files,
    controls.review?.node,
    note ? h('div', 'anb-muted anb-note', note) : null,
    controls.undo?.node
  );
}

/**
 * Render a whole transcript into `host`, replacing what was there. Returns the
 * run's controls (review, rewinds, undo), if it has any, so the caller can
 * `update()` them once `host` is in the page.
 */
export async function renderRun(
  payload: IRunPayload,
  host: HTMLElement,
  services: IMarkdownServices = {},
  undoRunner: IUndoRunner | null = null
): Promise<RunControls | null> {
  const view = buildRunView(payload.events);
  const controls = new RunControls(view, payload.run_id, undoRunner);
  const runId = payload.run_id;
  const inspect: Inspect | null =
    undoRunner?.inspect !== undefined
      ? (step, node) =>
          undoRunner.canRun(node)
            ? undoRunner.inspect!(runId, step, node)
            : Promise.resolve({
                ok: false,
                message: `This output is not in a notebook with a kernel; run %architect inspect ${runId}:${step} there.`,
                data: null
              })
      : null;
  const steps = await Promise.all(
    view.steps.map(step => renderStep(step, services, controls, inspect))
  );
  const root = h(
    'div',
    'anb-run',
    renderHeader(view),
    renderTodo(view.todo),
    renderWarnings(view.warnings),
    h('div', 'anb-timeline', ...steps),
    renderSummary(view, controls)
  );
  root.dataset.runId = payload.run_id;
  host.replaceChildren(root);
  controls.update();
  return controls.empty ? null : controls;
}
