/**
 * Undo, rewind and revert, run in the notebook's kernel: the three actions,
 * the kernel code each one sends, the magic a person types instead, and
 * `ActionButton`, a button with its progress and outcome. The actions run
 * through an `IUndoRunner`; where there is none (no notebook, no JupyterLab
 * plugin), a button is disabled and its tooltip says which magic to run.
 *
 * The payload comes from a notebook file that may be hostile, so what reaches
 * kernel code from it is only a run id matching `RUN_ID_PATTERN`, a step
 * number, and a path as URL-safe base64 (`b64:...`), never a path's text.
 */

import { h } from './dom';
import type { IInspection } from './inspector';

/** What to put back: the whole run, the run from a step on (a rewind), or one file (a review's Revert). */
export type UndoAction =
  | { kind: 'undo'; runId: string }
  | { kind: 'rewind'; runId: string; step: number }
  | { kind: 'revert'; runId: string; path: string }
  | { kind: 'reload' };

/** What the kernel said about an action. */
export interface IUndoResult {
  ok: boolean;
  /** The kernel's one-line report, or why the action failed. */
  message: string;
}

/** Runs actions in the kernel of the notebook that shows a run. */
export interface IUndoRunner {
  /** Whether `node` sits where a kernel can be reached (in a notebook). */
  canRun(node: HTMLElement): boolean;
  /** Run `action` in the kernel of the notebook holding `node`; never rejects. */
  run(action: UndoAction, node: HTMLElement): Promise<IUndoResult>;
  /** What the model was sent and said at `step` of run `runId` (`%architect inspect`); never rejects. */
  inspect?(
    runId: string,
    step: number,
    node: HTMLElement
  ): Promise<IInspection>;
}

/** Run ids as the kernel makes them (12 hex digits), with room to spare; nothing that could break out of a magic line. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Steps are counted from 1; the kernel's step numbers never come near this. */
export const MAX_STEP = 999_999;

/** Longer paths are not sent to the kernel (Linux allows 4,096 bytes). */
export const MAX_PATH_LENGTH = 4096;

export function isValidRunId(runId: unknown): runId is string {
  return typeof runId === 'string' && RUN_ID_PATTERN.test(runId);
}

export function isValidStep(step: unknown): step is number {
  return (
    typeof step === 'number' &&
    Number.isSafeInteger(step) &&
    step >= 1 &&
    step <= MAX_STEP
  );
}

/** A half of a surrogate pair on its own: such a string has no UTF-8 form the kernel could decode. */
const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A path that can be sent: not empty, not huge, no NUL, valid Unicode. */
export function isValidPath(path: unknown): path is string {
  return (
    typeof path === 'string' &&
    path.length > 0 &&
    path.length <= MAX_PATH_LENGTH &&
    !path.includes('\0') &&
    !LONE_SURROGATE.test(path)
  );
}

/** Whether `action`'s values may go into kernel code. */
export function isValidAction(action: UndoAction): boolean {
  if (action.kind === 'reload') {
    return true;
  }
  if (!isValidRunId(action.runId)) {
    return false;
  }
  switch (action.kind) {
    case 'undo':
      return true;
    case 'rewind':
      return isValidStep(action.step);
    case 'revert':
      return isValidPath(action.path);
  }
}

/** UTF-8 bytes of a valid string (jsdom has no `TextEncoder`). */
function utf8(text: string): number[] {
  const bytes: number[] = [];
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x80) {
      bytes.push(code);
    } else if (code < 0x800) {
      bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
    } else if (code < 0x10000) {
      bytes.push(
        0xe0 | (code >> 12),
        0x80 | ((code >> 6) & 63),
        0x80 | (code & 63)
      );
    } else {
      bytes.push(
        0xf0 | (code >> 18),
        0x80 | ((code >> 12) & 63),
        0x80 | ((code >> 6) & 63),
        0x80 | (code & 63)
      );
    }
  }
  return bytes;
}

const BASE64URL =
  'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** URL-safe base64 of the UTF-8 of `text`, without padding: only `[A-Za-z0-9_-]`. */
export function base64url(text: string): string {
  const bytes = utf8(text);
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const left = bytes.length - i;
    const n =
      (bytes[i] << 16) |
      ((left > 1 ? bytes[i + 1] : 0) << 8) |
      (left > 2 ? bytes[i + 2] : 0);
    out += BASE64URL[(n >> 18) & 63] + BASE64URL[(n >> 12) & 63];
    out += left > 1 ? BASE64URL[(n >> 6) & 63] : '';
    out += left > 2 ? BASE64URL[n & 63] : '';
  }
  return out;
}

function refuse(action: UndoAction): never {
  throw new Error(
    `Refusing to build kernel code from ${JSON.stringify(action)}.`
  );
}

/** The `%architect` command sent to the kernel; a path goes as base64, so no file name is ever code. */
export function kernelCommand(action: UndoAction): string {
  if (!isValidAction(action)) {
    refuse(action);
  }
  switch (action.kind) {
    case 'undo':
      return `undo ${action.runId}`;
    case 'rewind':
      return `undo ${action.runId}:${action.step}`;
    case 'revert':
      return `revert ${action.runId} b64:${base64url(action.path)}`;
    case 'reload':
      return 'reload';
  }
}

/** The code sent to the kernel; `%load_ext` makes it work where the user did not load the extension. */
export function undoCode(action: UndoAction): string {
  return `%load_ext architect_nb\n%architect ${kernelCommand(action)}`;
}

/**
 * Characters that end a line or cannot be seen (controls, bidi overrides,
 * zero-width characters, line separators): as `show()` in
 * architect_nb/execution/confirmation/confirmers.py has them.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/** A path as a person should read it: every invisible character shown as an escape, so names cannot disguise themselves. */
export function visiblePath(path: string): string {
  return path.replace(INVISIBLE, char => {
    const code = char.codePointAt(0) ?? 0;
    return code > 0xff
      ? `\\u${code.toString(16).padStart(4, '0')}`
      : `\\x${code.toString(16).padStart(2, '0')}`;
  });
}
/** What `shlex.quote` leaves bare. */
const SHELL_SAFE = /^[\w@%+=:,./-]+$/;

/** A path as a person types it after `%architect revert RUN` (the kernel splits the line like a shell). */
export function typedPath(path: string): string {
  if (SHELL_SAFE.test(path)) {
    return path;
  }
  if (visiblePath(path) !== path) {
    return `b64:${base64url(path)}`;
  }
  return `'${path.replace(/'/g, `'"'"'`)}'`;
}

/** The magic a person types for `action` (the Python renderer prints the same lines). */
export function typedMagic(action: UndoAction): string {
  switch (action.kind) {
    case 'undo':
      return `%architect undo ${action.runId}`;
    case 'rewind':
      return `%architect undo ${action.runId}:${action.step}`;
    case 'revert':
      return `%architect revert ${action.runId} ${typedPath(action.path)}`;
    case 'reload':
      return '%architect reload';
  }
}

/** The tooltip of a disabled button: how to do it by hand. */
export function undoHint(magic: string): string {
  return `This needs the notebook's kernel: run ${magic} in a cell of the notebook.`;
}

/** The labels and tooltips of one `ActionButton`. */
export interface IActionLabels {
  /** The button: "Undo this run". */
  label: string;
  /** While it runs: "Undoing…". */
  busy: string;
  /** The badge once it worked: "Undone". */
  done: string;
  /** The tooltip when a kernel is at hand. */
  title: string;
  /** The magic that does the same by hand, for the tooltip when no kernel is at hand. */
  magic: string;
  /** Extra classes on the button (besides `anb-undo-button`). */
  className?: string;
}

/** Does the work of a button, given a runner that can reach the kernel. */
export type Perform = (
  runner: IUndoRunner,
  node: HTMLElement
) => Promise<IUndoResult>;

/** The work of one action: run it in the kernel. */
export function performAction(action: UndoAction): Perform {
  return (runner, node) => runner.run(action, node);
}

/**
 * A button whose work runs in the kernel: disabled with a hint where no kernel
 * can be reached, busy while it runs, then the kernel's report beside a badge
 * if it worked, or the button back and the kernel's message in the error
 * colour if it did not. Errors are always shown, never swallowed. `onResult`
 * hears every outcome, so the controls around can follow.
 */
export class ActionButton {
  readonly node: HTMLDivElement;
  private readonly button: HTMLButtonElement;
  private readonly message: HTMLSpanElement;
  private busy = false;
  private done = false;
  private blocked: string | null = null;

  constructor(
    private readonly runner: IUndoRunner | null,
    private readonly labels: IActionLabels,
    private readonly perform: Perform,
    private readonly onResult: (result: IUndoResult) => void = () => undefined
  ) {
    const className = `anb-undo-button ${labels.className ?? ''}`.trim();
    this.button = h('button', className, labels.label);
    this.button.type = 'button';
    this.button.addEventListener('click', () => void this.trigger());
    this.message = h('span', 'anb-undo-error');
    this.message.setAttribute('role', 'alert');
    this.message.hidden = true;
    this.node = h('div', 'anb-undo', this.button, this.message);
    this.update();
  }

  get isBusy(): boolean {
    return this.busy;
  }

  /** Enable the button only where a kernel can be reached; call again once the node is attached. */
  update(): void {
    if (this.busy || this.done) {
      return;
    }
    if (this.blocked !== null) {
      this.button.disabled = true;
      this.button.title = this.blocked;
      this.node.title = this.blocked;
    } else if (this.runner !== null && this.runner.canRun(this.node)) {
      this.button.disabled = false;
      this.button.title = this.labels.title;
      this.node.removeAttribute('title');
    } else {
      // A disabled button gets no pointer events in some browsers, so its container carries the hint too.
      this.button.disabled = true;
      this.button.title = undoHint(this.labels.magic);
      this.node.title = this.button.title;
    }
  }

  /** Stop offering the action for `reason` (shown as the tooltip), or offer it again with null. */
  block(reason: string | null): void {
    this.blocked = reason;
    this.update();
  }

  /** Show the action as done by something else (a Revert all, a rewind), with `report`. */
  finish(badgeText: string, report: string): void {
    if (this.busy || this.done) {
      return;
    }
    this.done = true;
    this.showDone(badgeText, report);
  }

  /** Do the work, as a click does (a block does not stop it; being busy or done does). */
  async trigger(): Promise<IUndoResult> {
    if (this.busy || this.done || this.runner === null) {
      return {
        ok: false,
        message: this.done
          ? 'This was done already.'
          : this.busy
            ? 'This is running already.'
            : `No kernel can be reached from here: run ${this.labels.magic} in a cell of the notebook.`
      };
    }
    this.busy = true;
    this.button.disabled = true;
    this.button.textContent = this.labels.busy;
    this.message.hidden = true;
    let result: IUndoResult;
    try {
      result = await this.perform(this.runner, this.node);
    } catch (error) {
      result = { ok: false, message: String(error) };
    }
    this.busy = false;
    if (result.ok) {
      this.done = true;
      this.showDone(this.labels.done, result.message);
    } else {
      this.button.textContent = this.labels.label;
      this.message.textContent = result.message;
      this.message.hidden = false;
      this.update();
    }
    this.onResult(result);
    return result;
  }

  private showDone(badgeText: string, report: string): void {
    this.node.removeAttribute('title');
    this.node.replaceChildren(
      h(
        'span',
        'anb-undo-done',
        h('span', 'anb-badge anb-badge-ok', badgeText),
        ' ',
        h('span', 'anb-undo-report', report)
      )
    );
  }
}

/** The summary's "Undo this run", for runs whose transcript has no review list (older kernels). */
export function undoRunButton(
  runId: string,
  runner: IUndoRunner | null,
  onResult: (result: IUndoResult) => void = () => undefined
): ActionButton {
  const action: UndoAction = { kind: 'undo', runId };
  return new ActionButton(
    runner,
    {
      label: 'Undo this run',
      busy: 'Undoing…',
      done: 'Undone',
      title: `Restore the files this run changed (runs ${typedMagic(action)} in the kernel)`,
      magic: typedMagic(action)
    },
    performAction(action),
    onResult
  );
}
