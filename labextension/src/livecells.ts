/**
 * Cell operations on an open notebook's shared model: what the kernel's
 * notebook tools send (`architect_nb/tools/notebook_files/cellops.py`),
 * checked and applied here.
 *
 * An edit replaces one cell's source (only the span that differs, through
 * the cell's own transaction, so the cell's undo, Ctrl+Z in its editor,
 * reverts it); an insert and a delete go through the notebook's
 * transaction (its undo, Ctrl+Z in command mode, reverts them). Each
 * operation is one undo step, never merged with the person's typing. Edits
 * and deletes carry the source they were computed from: a cell changed
 * since is refused. Every check runs before anything changes, so a refused
 * list changes nothing. Outputs of an edited cell are kept, as when the
 * person edits it. An `outputs` operation sets a code cell's outputs and
 * execution count (the kernel's run_cell ran it), in one transaction that is
 * not an undo step of the source. An edit may also set the cell's
 * `metadata.architect` (its provenance record, `architect_nb/provenance`) in
 * the same undo step as its source, so Ctrl+Z takes both back together.
 */

import type {
  ISharedCell,
  ISharedCodeCell,
  ISharedNotebook,
  SharedCell
} from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';
import type { PartialJSONValue } from '@lumino/coreutils';

/** One operation, as JSON from the kernel. */
export interface ICellOp {
  op: 'edit' | 'insert' | 'delete' | 'outputs';
  id?: string;
  source?: string;
  expect?: string;
  after?: string | null;
  cell?: { [key: string]: unknown };
  outputs?: nbformat.IOutput[];
  execution_count?: number | null;
  /** An edit's new `metadata.architect`: `{}` deletes the key; absent leaves the metadata alone. */
  architect?: { [key: string]: unknown };
}

/** Why an operation was refused; the same codes as the kernel's. */
export type CellOpCode =
  'gone' | 'changed' | 'typing' | 'running' | 'taken' | 'anchor' | 'bad';

export class CellOpError extends Error {
  constructor(
    readonly code: CellOpCode,
    message: string
  ) {
    super(message);
  }
}

/** Who must not be disturbed: the cell being typed in, and cells running or protected. */
export interface IGuard {
  editing: string | null;
  busy: ReadonlySet<string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sourceText(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  return Array.isArray(value) ? value.map(String).join('') : '';
}

/** Parse the kernel's list of operations; anything malformed is refused. */
export function parseOps(raw: unknown): ICellOp[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 1000) {
    throw new CellOpError(
      'bad',
      'The request held no valid list of cell operations.'
    );
  }
  return raw.map(item => {
    if (!isRecord(item)) {
      throw new CellOpError('bad', 'A cell operation was not an object.');
    }
    const op = item.op;
    if (op === 'insert') {
      const cell = item.cell;
      const type = isRecord(cell) ? cell.cell_type : undefined;
      if (
        !isRecord(cell) ||
        typeof cell.id !== 'string' ||
        !['code', 'markdown', 'raw'].includes(String(type))
      ) {
        throw new CellOpError('bad', 'An insert carried no valid cell.');
      }
      const after = item.after;
      if (after !== null && after !== undefined && typeof after !== 'string') {
        throw new CellOpError(
          'bad',
          'An insert named no valid cell to follow.'
        );
      }
      return { op, cell, after: after ?? null };
    }
    if (op === 'outputs' && typeof item.id === 'string') {
      if (
        !Array.isArray(item.outputs) ||
        !item.outputs.every(isRecord) ||
        (item.expect !== undefined && typeof item.expect !== 'string')
      ) {
        throw new CellOpError(
          'bad',
          'An outputs operation carried no valid outputs.'
        );
      }
      const count = item.execution_count;
      return {
        op,
        id: item.id,
        outputs: item.outputs as unknown as nbformat.IOutput[],
        execution_count: typeof count === 'number' ? count : null,
        expect: item.expect as string | undefined
      };
    }
    if ((op === 'edit' || op === 'delete') && typeof item.id === 'string') {
      if (item.expect !== undefined && typeof item.expect !== 'string') {
        throw new CellOpError('bad', 'An operation carried no valid source.');
      }
      if (op === 'edit' && typeof item.source !== 'string') {
        throw new CellOpError('bad', 'An edit carried no new source.');
      }
      if (
        op === 'edit' &&
        item.architect !== undefined &&
        !isRecord(item.architect)
      ) {
        throw new CellOpError(
          'bad',
          'An edit carried cell metadata that is not an object.'
        );
      }
      const parsed: ICellOp = {
        op,
        id: item.id,
        source: op === 'edit' ? String(item.source) : undefined,
        expect: item.expect as string | undefined
      };
      if (op === 'edit' && item.architect !== undefined) {
        parsed.architect = item.architect as { [key: string]: unknown };
      }
      return parsed;
    }
    throw new CellOpError(
      'bad',
      `Unknown cell operation ${JSON.stringify(op)}.`
    );
  });
}

/** Refuse the first operation that cannot be applied, as `check_ops` does in the kernel. */
export function checkOps(
  notebook: ISharedNotebook,
  ops: ICellOp[],
  guard: IGuard
): void {
  const ids = notebook.cells.map(cell => cell.getId());
  const sources = new Map(
    notebook.cells.map(cell => [cell.getId(), cell.getSource()] as const)
  );
  for (const op of ops) {
    if (op.op === 'insert') {
      const id = String(op.cell?.id);
      if (ids.includes(id)) {
        throw new CellOpError(
          'taken',
          `A cell with id '${id}' exists already; nothing changed.`
        );
      }
      if (
        op.after !== null &&
        op.after !== undefined &&
        !ids.includes(op.after)
      ) {
        throw new CellOpError(
          'anchor',
          `Cell '${op.after}', after which the new cell goes, is no longer in the notebook; nothing changed. Call read_notebook again, then retry.`
        );
      }
      const at = op.after ? ids.indexOf(op.after) + 1 : 0;
      ids.splice(at, 0, id);
      sources.set(id, sourceText(op.cell?.source));
      continue;
    }
    const id = op.id ?? '';
    if (!ids.includes(id)) {
      throw new CellOpError(
        'gone',
        `Cell '${id}' is no longer in the notebook (deleted, or the notebook was reloaded); nothing changed. Call read_notebook again and use the ids it shows.`
      );
    }
    if (id === guard.editing) {
      throw new CellOpError(
        'typing',
        `The person is typing in cell '${id}' right now, so it was left alone; nothing changed. Change another cell, or ask them to leave that cell and try again.`
      );
    }
    if (guard.busy.has(id)) {
      throw new CellOpError(
        'running',
        `Cell '${id}' is running or queued to run (the running %%architect cell is never changed); nothing changed. Leave it, or change it after it has run.`
      );
    }
    if (op.expect !== undefined && sources.get(id) !== op.expect) {
      throw new CellOpError(
        'changed',
        `Cell '${id}' changed since it was read (the person edited it); nothing changed. Call read_notebook again, then retry.`
      );
    }
    if (op.op === 'outputs') {
      const cell = notebook.cells.find(c => c.getId() === id);
      if (cell !== undefined && cell.cell_type !== 'code') {
        throw new CellOpError(
          'bad',
          `Cell '${id}' is not a code cell, so it has no outputs; nothing changed.`
        );
      }
    } else if (op.op === 'delete') {
      ids.splice(ids.indexOf(id), 1);
    } else {
      sources.set(id, op.source ?? '');
    }
  }
}

/** The smallest replacement that turns `before` into `after`: [start, end of the old span, new text]. */
export function sourceSplice(
  before: string,
  after: string
): [number, number, string] {
  let start = 0;
  const limit = Math.min(before.length, after.length);
  while (start < limit && before[start] === after[start]) {
    start++;
  }
  let tail = 0;
  while (
    tail < limit - start &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  ) {
    tail++;
  }
  return [start, before.length - tail, after.slice(start, after.length - tail)];
}

interface IUndoable {
  undoManager?: { stopCapturing(): void } | null;
}

/** Keep what happens next out of the undo step before it (the person's typing), and vice versa. */
function separateUndo(owner: unknown): void {
  const manager = (owner as IUndoable).undoManager;
  if (manager && typeof manager.stopCapturing === 'function') {
    manager.stopCapturing();
  }
}

function cellIndex(notebook: ISharedNotebook, id: string): number {
  return notebook.cells.findIndex(cell => cell.getId() === id);
}

/** The new cell as the shared model takes it: its source as one string, no execution yet. */
function newCell(raw: { [key: string]: unknown }): SharedCell.Cell {
  const cell: { [key: string]: unknown; cell_type: string } = {
    cell_type: String(raw.cell_type),
    id: String(raw.id),
    source: sourceText(raw.source),
    metadata: isRecord(raw.metadata) ? raw.metadata : {}
  };
  if (cell.cell_type === 'code') {
    cell.outputs = Array.isArray(raw.outputs) ? raw.outputs : [];
    cell.execution_count =
      typeof raw.execution_count === 'number' ? raw.execution_count : null;
  } else if (isRecord(raw.attachments)) {
    cell.attachments = raw.attachments;
  }
  return cell as SharedCell.Cell;
}

/** Set the cell's `metadata.architect`, or delete it for `{}`. */
function setArchitect(
  cell: ISharedCell,
  value: { [key: string]: unknown }
): void {
  if (Object.keys(value).length === 0) {
    cell.deleteMetadata('architect');
  } else {
    cell.setMetadata('architect', value as PartialJSONValue);
  }
}

/** Check, then apply `ops` in order; each one a separate undo step. */
export function applyOps(
  notebook: ISharedNotebook,
  ops: ICellOp[],
  guard: IGuard
): void {
  checkOps(notebook, ops, guard);
  for (const op of ops) {
    if (op.op === 'insert') {
      const at = op.after ? cellIndex(notebook, op.after) + 1 : 0;
      separateUndo(notebook);
      notebook.insertCell(at, newCell(op.cell ?? {}));
      separateUndo(notebook);
      continue;
    }
    const index = cellIndex(notebook, op.id ?? '');
    if (op.op === 'outputs') {
      const cell = notebook.cells[index] as ISharedCodeCell;
      // The old outputs go first, in a change of their own: given both in one change, JupyterLab's output
      // area adds the new stream output to the old one of the same name, then deletes that, so a cell that
      // printed before and prints again (run_cell) would show no output at all.
      notebook.transact(() => cell.setOutputs([]), false);
      notebook.transact(() => {
        cell.setOutputs(op.outputs ?? []);
        cell.execution_count = op.execution_count ?? null;
      }, false);
      continue;
    }
    if (op.op === 'delete') {
      separateUndo(notebook);
      notebook.deleteCell(index);
      separateUndo(notebook);
      continue;
    }
    const cell: ISharedCell = notebook.cells[index];
    const [start, end, text] = sourceSplice(cell.getSource(), op.source ?? '');
    const architect = op.architect;
    separateUndo(cell);
    // One transaction: the record always describes the source it sits beside, also after Ctrl+Z.
    cell.transact(() => {
      cell.updateSource(start, end, text);
      if (architect !== undefined) {
        setArchitect(cell, architect);
      }
    });
    separateUndo(cell);
  }
}
