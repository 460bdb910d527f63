/**
 * What a finished run offers to put back, and how those controls follow each
 * other: the summary's review list (each changed file with its status and
 * diff, Keep and Revert per file, Revert all; the person's variables are one
 * more entry, `KERNEL_ENTRY`, whose "diff" is plain lines), a "Rewind to
 * before this step" per step that changed files or variables, and "Undo this
 * run" for transcripts from older kernels, which carry no review list.
 *
 * Keep only marks a row. Revert all reverts every row not kept: with nothing
 * kept or reverted yet it is the run's undo (`%architect undo RUN`, which
 * gives back the git index too); otherwise one revert per remaining file.
 */

import { badge, card, h, longText } from './dom';
import { renderDiff } from './diffview';
import { IRunView, stepChanged, stepsByFile } from './model';
import type { ChangeStatus, IFileChange } from './types';
import { KERNEL_ENTRY } from './types';
import {
  ActionButton,
  isValidPath,
  isValidRunId,
  isValidStep,
  IUndoResult,
  IUndoRunner,
  performAction,
  typedMagic,
  UndoAction,
  undoRunButton,
  visiblePath
} from './undo';

/** The badge style of each change status. */
const CHANGE_STYLE: Record<ChangeStatus, string> = {
  added: 'ok',
  deleted: 'failed',
  modified: 'pending'
};

/**
 * With more files or diff lines than these, the review's diffs start folded
 * and are drawn when opened (each call's card shows its own diff already).
 */
export const OPEN_DIFFS = 8;
export const OPEN_DIFF_LINES = 400;

export type RowState = 'open' | 'kept' | 'reverted';

/** What a review row is called: the file's path, or "Your variables (kernel)" for `KERNEL_ENTRY`. */
export function reviewLabel(path: string): string {
  return path === KERNEL_ENTRY ? 'Your variables (kernel)' : visiblePath(path);
}

/** The variables' entry: what each step changed, as plain lines the kernel wrote (not a diff). */
function variablesCard(text: string, open: boolean): HTMLDetailsElement {
  const lines = text ? text.replace(/\n$/, '').split('\n').length : 0;
  const title = h(
    'span',
    'anb-section-title',
    `What changed (${lines} line${lines === 1 ? '' : 's'})`
  );
  return card(
    'anb-review-diff anb-review-variables',
    [title],
    open,
    longText(text.replace(/\n$/, ''), 'anb-output', 40)
  );
}

/** A lazily drawn diff: drawn when first opened, so a 200-file review costs what is looked at. */
function diffCard(diff: string, open: boolean): HTMLDetailsElement {
  const lines = diff ? diff.replace(/\n$/, '').split('\n').length : 0;
  const title = h(
    'span',
    'anb-section-title',
    lines ? `Diff (${lines} line${lines === 1 ? '' : 's'})` : 'Diff'
  );
  const details = card('anb-review-diff', [title], false);
  let drawn = false;
  const draw = (): void => {
    if (drawn || !details.open) {
      return;
    }
    drawn = true;
    details.append(
      diff.trim()
        ? renderDiff(diff)
        : h(
            'div',
            'anb-muted',
            'No text diff (a binary file, an empty file, or only its permissions changed).'
          )
    );
  };
  details.addEventListener('toggle', draw);
  details.open = open;
  draw();
  return details;
}

/** One file of the review: status, path, Keep, Revert and the diff. */
export class ReviewRow {
  readonly node: HTMLDivElement;
  /** Null when the path cannot be sent to the kernel (the row is then read-only). */
  readonly revert: ActionButton | null;
  private readonly keepButton: HTMLButtonElement;
  private readonly stateBadge: HTMLSpanElement;
  private readonly note: HTMLDivElement;
  private readonly diff: HTMLDetailsElement;
  private current: RowState = 'open';

  constructor(
    readonly change: IFileChange,
    runId: string | null,
    runner: IUndoRunner | null,
    openDiff: boolean,
    private readonly onChange: () => void
  ) {
    const { path, status } = change;
    const kernel = path === KERNEL_ENTRY;
    this.keepButton = h('button', 'anb-undo-button anb-keep-button', 'Keep');
    this.keepButton.type = 'button';
    this.keepButton.title =
      'Keep this change: Revert all leaves it alone (nothing runs in the kernel)';
    this.keepButton.setAttribute('aria-pressed', 'false');
    this.keepButton.addEventListener('click', () => this.toggleKeep());
    this.stateBadge = h('span', 'anb-badge anb-review-state');
    this.stateBadge.hidden = true;
    this.note = h('div', 'anb-muted anb-review-note');
    this.note.hidden = true;
    const action: UndoAction | null =
      runId !== null && isValidPath(path)
        ? { kind: 'revert', runId, path }
        : null;
    this.revert =
      action === null
        ? null
        : new ActionButton(
            runner,
            {
              label: 'Revert',
              busy: 'Reverting…',
              done: 'Reverted',
              title: kernel
                ? `Put your variables back as they were before the run (runs ${typedMagic(action)} in the kernel)`
                : `Put ${visiblePath(path)} back as it was before the run (runs ${typedMagic(action)} in the kernel)`,
              magic: typedMagic(action),
              className: 'anb-revert-button'
            },
            performAction(action),
            result => this.reverted(result)
          );
    const head = h(
      'div',
      'anb-review-head',
      badge(status, CHANGE_STYLE[status]),
      kernel
        ? h('span', 'anb-review-path anb-review-kernel', reviewLabel(path))
        : h('code', 'anb-review-path', visiblePath(path)),
      this.stateBadge,
      this.revert !== null ? this.keepButton : null,
      this.revert?.node
    );
    this.diff = kernel
      ? variablesCard(change.diff, openDiff)
      : diffCard(change.diff, openDiff);
    this.node = h('div', 'anb-review-row', head, this.note, this.diff);
    this.node.dataset.path = path;
    this.sync();
  }

  get state(): RowState {
    return this.current;
  }

  /** Whether Revert all should revert this row now. */
  get pending(): boolean {
    return this.current === 'open' && !(this.revert?.isBusy ?? false);
  }

  /** Reverted by something else: Revert all's undo of the run, or a rewind. */
  markReverted(badgeText: string, report: string): void {
    this.current = 'reverted';
    this.diff.open = false;
    this.revert?.finish(badgeText, report);
    this.sync();
  }

  /** A note under the row (a rewind that undid only part of this file's changes). */
  addNote(text: string): void {
    this.note.textContent = text;
    this.note.hidden = false;
  }

  /** While Revert all runs, nothing else is clicked. */
  lock(reason: string | null): void {
    this.keepButton.disabled = reason !== null;
    this.revert?.block(reason);
  }

  update(): void {
    this.revert?.update();
  }

  private toggleKeep(): void {
    if (this.current === 'reverted') {
      return;
    }
    this.current = this.current === 'kept' ? 'open' : 'kept';
    this.sync();
    this.onChange();
  }

  private reverted(result: IUndoResult): void {
    if (result.ok) {
      this.current = 'reverted';
      this.diff.open = false; // what is left to review is the rest
      this.sync();
    }
    this.onChange();
  }

  private sync(): void {
    const kept = this.current === 'kept';
    this.node.dataset.state = this.current;
    this.keepButton.setAttribute('aria-pressed', String(kept));
    this.keepButton.hidden = this.current === 'reverted';
    this.stateBadge.hidden = !kept;
    this.stateBadge.textContent = kept ? 'kept' : '';
    this.stateBadge.className = `anb-badge anb-review-state${kept ? ' anb-badge-ok' : ''}`;
  }
}

/**
 * "Review: 2 files changed", "Review: 1 file and your variables changed", "Review: your variables changed"
 * (the Python renderer's title, in architect_nb/notebook/output/event_view.py).
 */
export function reviewTitle(files: number, variables: boolean): string {
  if (variables && files === 0) {
    return 'Review: your variables changed';
  }
  const count = `${files} file${files === 1 ? '' : 's'}`;
  return `Review: ${count}${variables ? ' and your variables' : ''} changed`;
}

/** The summary's review list: a row per changed file (and one for the variables) and Revert all. */
export class ReviewList {
  readonly node: HTMLElement;
  readonly rows: ReviewRow[];
  readonly revertAll: ActionButton | null;

  constructor(
    changes: readonly IFileChange[],
    /** Files the run changed that the transcript does not list (the kernel caps the list). */
    private readonly unlisted: number,
    runId: string | null,
    runner: IUndoRunner | null,
    private readonly onUndone: () => void
  ) {
    const lines = changes.reduce(
      (sum, change) => sum + change.diff.split('\n').length,
      0
    );
    const openDiffs = changes.length <= OPEN_DIFFS && lines <= OPEN_DIFF_LINES;
    this.rows = changes.map(
      change =>
        new ReviewRow(change, runId, runner, openDiffs, () => this.refresh())
    );
    const undo: UndoAction | null =
      runId !== null ? { kind: 'undo', runId } : null;
    this.revertAll =
      undo === null
        ? null
        : new ActionButton(
            runner,
            {
              label: 'Revert all',
              busy: 'Reverting…',
              done: 'Reverted',
              title: `Put back every entry not kept (with nothing kept or reverted yet, runs ${typedMagic(undo)} in the kernel)`,
              magic: typedMagic(undo),
              className: 'anb-revert-all-button'
            },
            (activeRunner, node) =>
              this.revertRest(undo.runId, activeRunner, node)
          );
    const variables = changes.some(change => change.path === KERNEL_ENTRY);
    const count =
      changes.filter(change => change.path !== KERNEL_ENTRY).length + unlisted;
    const more =
      unlisted > 0 && runId !== null
        ? h(
            'div',
            'anb-muted anb-review-more',
            `${unlisted} more file(s) are not listed here: %architect review ${runId} lists them all.`
          )
        : null;
    this.node = h(
      'div',
      'anb-review',
      h(
        'div',
        'anb-review-title',
        h('span', 'anb-section-title', reviewTitle(count, variables)),
        this.revertAll?.node
      ),
      ...this.rows.map(row => row.node),
      more
    );
    this.refresh();
  }

  update(): void {
    this.revertAll?.update();
    for (const row of this.rows) {
      row.update();
    }
  }

  /** Rows reverted by the run's undo or a rewind. */
  markReverted(paths: (path: string) => boolean, why: string): void {
    for (const row of this.rows) {
      if (row.state !== 'reverted' && paths(row.change.path)) {
        row.markReverted('Reverted', why);
      }
    }
    this.refresh();
  }

  private refresh(): void {
    if (this.revertAll === null || this.revertAll.isBusy) {
      return;
    }
    this.revertAll.block(
      this.rows.some(row => row.pending)
        ? null
        : 'Nothing left to revert: every entry is kept or reverted.'
    );
  }

  /** Nothing kept, reverted, or being reverted: Revert all is the run's undo. */
  private untouched(): boolean {
    return this.rows.every(row => row.state === 'open' && row.pending);
  }

  private async revertRest(
    runId: string,
    runner: IUndoRunner,
    node: HTMLElement
  ): Promise<IUndoResult> {
    const busy = 'Revert all is running.';
    for (const row of this.rows) {
      row.lock(busy);
    }
    try {
      if (this.untouched()) {
        const result = await runner.run({ kind: 'undo', runId }, node);
        if (result.ok) {
          this.markReverted(() => true, 'Undone with the whole run.');
          this.onUndone();
        }
        return result;
      }
      return await this.revertEach();
    } finally {
      for (const row of this.rows) {
        row.lock(null);
      }
    }
  }

  /** One revert per file not kept, each reported on its row. */
  private async revertEach(): Promise<IUndoResult> {
    const targets = this.rows.filter(row => row.pending && row.revert);
    const kept = this.rows.filter(row => row.state === 'kept').length;
    const unsendable = this.rows.filter(row => row.pending && !row.revert);
    let reverted = 0;
    for (const row of targets) {
      const result = await row.revert?.trigger();
      reverted += result?.ok ? 1 : 0;
    }
    const failed = targets.length - reverted;
    const parts = [`Reverted ${reverted} of ${targets.length} file(s)`];
    if (kept > 0) {
      parts.push(`kept ${kept}`);
    }
    if (this.unlisted > 0) {
      parts.push(
        `the ${this.unlisted} unlisted file(s) are as the run left them`
      );
    }
    let message = `${parts.join('; ')}.`;
    if (failed > 0) {
      message += ` ${failed} could not be reverted: see the message on ${failed === 1 ? 'its row' : 'their rows'}.`;
    }
    if (unsendable.length > 0) {
      const names = unsendable.map(row => reviewLabel(row.change.path));
      message += ` Not sent, since such a name cannot be: ${names.join(', ')}; %architect undo reverts them with the run.`;
    }
    return { ok: failed === 0 && unsendable.length === 0, message };
  }
}

/** A step's "Rewind to before this step"; `variables` when the run changed the person's variables. */
function rewindButton(
  runId: string,
  step: number,
  variables: boolean,
  runner: IUndoRunner | null,
  onResult: (result: IUndoResult) => void
): ActionButton {
  const action: UndoAction = { kind: 'rewind', runId, step };
  const what = variables
    ? 'the workspace and your variables back as they were'
    : 'the workspace back as it was';
  return new ActionButton(
    runner,
    {
      label: 'Rewind to before this step',
      busy: 'Rewinding…',
      done: 'Rewound',
      title: `Put ${what} just before step ${step} (runs ${typedMagic(action)} in the kernel)`,
      magic: typedMagic(action),
      className: 'anb-rewind-button'
    },
    performAction(action),
    onResult
  );
}

/**
 * Every control of one finished run, and how they follow each other: an undo
 * of the whole run ends the rewinds; a rewind marks the later steps rewound and
 * the files (and variables) only they changed reverted.
 */
export class RunControls {
  readonly review: ReviewList | null;
  /** "Undo this run", for a transcript without a review list. */
  readonly undo: ActionButton | null;
  private readonly rewinds = new Map<number, ActionButton>();
  private readonly fileSteps: Map<string, number[]>;

  constructor(view: IRunView, runId: string, runner: IUndoRunner | null) {
    const done = view.finished;
    const safeId = isValidRunId(runId) ? runId : null;
    this.fileSteps = stepsByFile(view);
    const variables = this.fileSteps.has(KERNEL_ENTRY);
    const undone = (): void => this.undone();
    // files_changed names files only; the review may list the variables too.
    const files = done?.changes.filter(c => c.path !== KERNEL_ENTRY) ?? [];
    this.review =
      done !== null && done.changes.length > 0
        ? new ReviewList(
            done.changes,
            Math.max(0, done.files_changed.length - files.length),
            safeId,
            runner,
            undone
          )
        : null;
    this.undo =
      done !== null &&
      (done.files_changed.length > 0 || variables) &&
      this.review === null &&
      safeId !== null
        ? undoRunButton(safeId, runner, result => {
            if (result.ok) {
              undone();
            }
          })
        : null;
    if (done === null || safeId === null) {
      return;
    }
    for (const step of view.steps) {
      if (stepChanged(step) && isValidStep(step.step)) {
        this.rewinds.set(
          step.step,
          rewindButton(safeId, step.step, variables, runner, result => {
            if (result.ok) {
              this.rewound(step.step);
            }
          })
        );
      }
    }
  }

  /** Whether there is nothing to click (a read-only review list has no buttons). */
  get empty(): boolean {
    return (
      this.undo === null &&
      (this.review?.revertAll ?? null) === null &&
      this.rewinds.size === 0
    );
  }

  rewindFor(step: number): ActionButton | null {
    return this.rewinds.get(step) ?? null;
  }

  /** Enable what a kernel can be reached for; call again once the output is in the page. */
  update(): void {
    this.undo?.update();
    this.review?.update();
    for (const rewind of this.rewinds.values()) {
      rewind.update();
    }
  }

  private undone(): void {
    for (const rewind of this.rewinds.values()) {
      rewind.block('This run was undone, so there is nothing left to rewind.');
    }
  }

  private rewound(step: number): void {
    for (const [later, rewind] of this.rewinds) {
      if (later > step) {
        rewind.finish('Rewound', `With the rewind to before step ${step}.`);
      }
    }
    // A file (or the variables) only the rewound steps changed is back as before the run; one changed
    // earlier too is not.
    const steps = (path: string): number[] => this.fileSteps.get(path) ?? [];
    this.review?.markReverted(
      path => steps(path).length > 0 && steps(path).every(s => s >= step),
      `Rewound to before step ${step}.`
    );
    for (const row of this.review?.rows ?? []) {
      if (
        row.state !== 'reverted' &&
        steps(row.change.path).some(s => s >= step)
      ) {
        row.addNote(
          row.change.path === KERNEL_ENTRY
            ? `Partly rewound: your variables' changes from step ${step} on are undone; the list is still the whole run's.`
            : `Partly rewound: its changes from step ${step} on are undone; the diff is still the whole run's.`
        );
      }
    }
  }
}
