/** A real shared notebook model (JupyterLab's `@jupyter/ydoc`), for the live-edit tests. */

import { YNotebook } from '@jupyter/ydoc';

// Cells are built before they join the document, which makes Yjs warn on every insert (in JupyterLab too).
const warn = console.warn;
console.warn = (...args: unknown[]) => {
  if (!/Invalid access|Not same Y\.Doc/.test(String(args[0]))) {
    warn(...args);
  }
};

export interface ITestCell {
  id: string;
  source: string;
  type?: 'code' | 'markdown' | 'raw';
  outputs?: unknown[];
}

/**
 * A notebook model as JupyterLab makes it: by default each cell has its own
 * undo manager (Ctrl+Z in its editor) and the notebook's undoes cell
 * inserts and deletes (Ctrl+Z in command mode).
 */
export function sharedNotebook(
  cells: ITestCell[],
  documentWideUndo = false
): YNotebook {
  const notebook = new YNotebook({
    disableDocumentWideUndoRedo: !documentWideUndo
  });
  const content = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: cells.map(c =>
      c.type === 'markdown' || c.type === 'raw'
        ? { cell_type: c.type, id: c.id, source: c.source, metadata: {} }
        : {
            cell_type: 'code',
            id: c.id,
            source: c.source,
            metadata: {},
            outputs: (c.outputs ?? []) as never[],
            execution_count: c.outputs ? 1 : null
          }
    )
  };
  notebook.setSource(
    content as unknown as Parameters<YNotebook['setSource']>[0]
  );
  notebook.undoManager.clear();
  for (const cell of notebook.cells) {
    cell.undoManager?.clear();
  }
  return notebook;
}

export function ids(notebook: YNotebook): string[] {
  return notebook.cells.map(cell => cell.getId());
}

export function sourceOf(notebook: YNotebook, id: string): string {
  const cell = notebook.cells.find(c => c.getId() === id);
  if (cell === undefined) {
    throw new Error(`no cell ${id}`);
  }
  return cell.getSource();
}

/** Type into a cell as the person does: through the cell's own transaction. */
export function typeInto(
  notebook: YNotebook,
  id: string,
  at: number,
  text: string
): void {
  const cell = notebook.cells.find(c => c.getId() === id);
  cell?.updateSource(at, at, text);
}
