/**
 * The "Undo this run" button in a run's summary. The undo itself runs in the
 * notebook's kernel (`%architect undo RUN_ID`) through an `IUndoRunner`; where
 * there is none (no notebook, no JupyterLab plugin), the button is disabled
 * and its tooltip says which magic to run instead.
 *
 * The payload comes from a notebook file that may be hostile, so the only
 * payload value that reaches kernel code is a run id matching
 * `RUN_ID_PATTERN`; anything else gets no button.
 */

import { h } from './dom';

/** What the kernel said about an undo. */
export interface IUndoResult {
  ok: boolean;
  /** The kernel's one-line report, or why the undo failed. */
  message: string;
}

/** Runs undos in the kernel of the notebook that shows a run. */
export interface IUndoRunner {
  /** Whether `node` sits where a kernel can be reached (in a notebook). */
  canRun(node: HTMLElement): boolean;
  /** Undo run `runId` in the kernel of the notebook holding `node`; never rejects. */
  run(runId: string, node: HTMLElement): Promise<IUndoResult>;
}

/** Run ids as the kernel makes them (12 hex digits), with room to spare; nothing that could break out of a magic line. */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function isValidRunId(runId: unknown): runId is string {
  return typeof runId === 'string' && RUN_ID_PATTERN.test(runId);
}

/** The code sent to the kernel; `%load_ext` makes it work where the user did not load the extension. */
export function undoCode(runId: string): string {
  if (!isValidRunId(runId)) {
    throw new Error(
      `Refusing to build kernel code from run id ${JSON.stringify(runId)}.`
    );
  }
  return `%load_ext architect_nb\n%architect undo ${runId}`;
}

/** The tooltip of a disabled button: how to undo by hand. */
export function undoHint(runId: string): string {
  return `Undo needs this notebook's kernel: run %architect undo ${runId} in a cell of the notebook.`;
}

/** The button, its progress and its outcome, for one run. */
export class UndoControl {
  readonly node: HTMLDivElement;
  private readonly button: HTMLButtonElement;
  private readonly message: HTMLSpanElement;
  private busy = false;
  private done = false;

  constructor(
    private readonly runId: string,
    private readonly runner: IUndoRunner | null
  ) {
    this.button = h('button', 'anb-undo-button', 'Undo this run');
    this.button.type = 'button';
    this.button.addEventListener('click', () => void this.undo());
    this.message = h('span', 'anb-undo-error');
    this.message.setAttribute('role', 'alert');
    this.message.hidden = true;
    this.node = h('div', 'anb-undo', this.button, this.message);
    this.update();
  }

  /** Enable the button only where a kernel can be reached; call again once the node is attached. */
  update(): void {
    if (this.busy || this.done) {
      return;
    }
    if (this.runner !== null && this.runner.canRun(this.node)) {
      this.button.disabled = false;
      this.button.title = `Restore the files this run changed (runs %architect undo ${this.runId} in the kernel)`;
      this.node.removeAttribute('title');
    } else {
      // A disabled button gets no pointer events in some browsers, so its container carries the hint too.
      this.button.disabled = true;
      this.button.title = undoHint(this.runId);
      this.node.title = this.button.title;
    }
  }

  private async undo(): Promise<void> {
    if (this.busy || this.runner === null) {
      return;
    }
    this.busy = true;
    this.button.disabled = true;
    this.button.textContent = 'Undoing…';
    this.message.hidden = true;
    let result: IUndoResult;
    try {
      result = await this.runner.run(this.runId, this.node);
    } catch (error) {
      result = { ok: false, message: String(error) };
    }
    this.busy = false;
    if (result.ok) {
      this.done = true;
      this.node.replaceChildren(
        h(
          'span',
          'anb-undo-done',
          h('span', 'anb-badge anb-badge-ok', 'Undone'),
          ' ',
          h('span', 'anb-undo-report', result.message)
        )
      );
      return;
    }
    this.button.textContent = 'Undo this run';
    this.button.disabled = false;
    this.message.textContent = result.message;
    this.message.hidden = false;
  }
}
