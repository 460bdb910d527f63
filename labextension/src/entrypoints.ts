/**
 * Ways into architect from a notebook: a "Fix with architect" button on
 * every error output, and an "Ask architect" command on a cell (in the cell's
 * context menu and the command palette). Each inserts an `%%architect` cell
 * below the cell, with a task that names it as the agent names cells
 * ("cell 4 [7]": its position from 0 and its execution count), for the person
 * to edit and run. Nothing runs by itself.
 */

import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import type { Cell, CodeCell, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

export const ASK_COMMAND = 'architect-nb:ask';
export const FIX_BUTTON_CLASS = 'anb-fix-button';
const CATEGORY = 'architect';
const ANSI = new RegExp(
  `${String.fromCharCode(27)}\\[[0-9;?]*[ -/]*[@-~]`,
  'g'
);

/** How a task names a cell: `cell 4 [7]`, or `cell 4` before it ran. */
export function cellName(index: number, count: number | null): string {
  return count ? `cell ${index} [${count}]` : `cell ${index}`;
}

/** One line, at most `width` characters. */
function short(text: string, width: number): string {
  // Tracebacks carry terminal colours; a task is plain text.
  const line = text.replace(ANSI, '').split('\n')[0].trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** The task of a "fix this error" cell. */
export function fixTask(
  index: number,
  count: number | null,
  ename: string,
  evalue: string
): string {
  const what = evalue ? `${ename}: ${short(evalue, 120)}` : ename;
  return `Fix the error in ${cellName(index, count)} (${what}).`;
}

/** The task of an "ask about this cell" cell: the person writes the rest. */
export function askTask(index: number, count: number | null): string {
  return `About ${cellName(index, count)}: `;
}

/** Insert an `%%architect` cell with `task` below cell `index` of `panel`, and put the cursor at its end. */
export function insertArchitectCell(
  panel: NotebookPanel,
  index: number,
  task: string
): void {
  const notebook = panel.content;
  const model = notebook.model;
  if (model === null) {
    return;
  }
  const source = `%%architect\n${task}`;
  model.sharedModel.insertCell(index + 1, {
    cell_type: 'code',
    source,
    metadata: { trusted: true }
  });
  notebook.activeCellIndex = index + 1;
  notebook.deselectAll();
  notebook.mode = 'edit';
  const editor = notebook.activeCell?.editor;
  if (editor) {
    const lines = source.split('\n');
    editor.setCursorPosition({
      line: lines.length - 1,
      column: lines[lines.length - 1].length
    });
    editor.focus();
  }
}

function countOf(cell: Cell): number | null {
  return cell.model.type === 'code'
    ? ((cell.model as ICodeCellModel).executionCount ?? null)
    : null;
}

/** Put a "Fix with architect" button on each error output of `panel` that has none yet. */
export function decorateErrors(panel: NotebookPanel): void {
  const notebook = panel.content;
  notebook.widgets.forEach((cell, index) => {
    if (cell.model.type !== 'code') {
      return;
    }
    const area = (cell as CodeCell).outputArea;
    if (area === undefined || area.model === undefined) {
      return;
    }
    for (let i = 0; i < area.model.length; i++) {
      const output = area.model.get(i);
      const child = area.widgets[i];
      if (output.type !== 'error' || child === undefined) {
        continue;
      }
      if (child.node.querySelector(`.${FIX_BUTTON_CLASS}`) !== null) {
        continue;
      }
      const error = output.toJSON() as { ename?: string; evalue?: string };
      const button = document.createElement('button');
      button.className = `${FIX_BUTTON_CLASS} jp-Button`;
      button.type = 'button';
      button.textContent = 'Fix with architect';
      button.title =
        'Insert an %%architect cell below, with a task that names this cell and its error';
      button.addEventListener('click', () => {
        const at = notebook.widgets.indexOf(cell);
        insertArchitectCell(
          panel,
          at < 0 ? index : at,
          fixTask(
            at < 0 ? index : at,
            countOf(cell),
            String(error.ename ?? 'Error'),
            String(error.evalue ?? '')
          )
        );
      });
      // Under the traceback, inside the output (the output's row also holds its prompt).
      const rendered = child.node.querySelector('.jp-OutputArea-output');
      (rendered ?? child.node).appendChild(button);
    }
  });
}

/** Keep the buttons on the error outputs of `panel` as outputs come and go. */
export function watchErrors(panel: NotebookPanel): void {
  let pending = false;
  const schedule = (): void => {
    if (pending || panel.isDisposed) {
      return;
    }
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (!panel.isDisposed) {
        decorateErrors(panel);
      }
    });
  };
  const observer = new MutationObserver(schedule);
  observer.observe(panel.content.node, { childList: true, subtree: true });
  panel.disposed.connect(() => observer.disconnect());
  schedule();
}

export const entryPointsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'architect-nb:entry-points',
  description:
    'A "Fix with architect" button on error outputs and an "Ask architect" command on cells.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null
  ) => {
    app.commands.addCommand(ASK_COMMAND, {
      label: 'Ask architect',
      caption:
        'Insert an %%architect cell below this cell, with a task that names it',
      isEnabled: () => Boolean(tracker.currentWidget?.content.activeCell),
      execute: () => {
        const panel = tracker.currentWidget;
        const cell = panel?.content.activeCell;
        if (!panel || !cell) {
          return;
        }
        const index = panel.content.activeCellIndex;
        insertArchitectCell(panel, index, askTask(index, countOf(cell)));
      }
    });
    app.contextMenu.addItem({
      command: ASK_COMMAND,
      selector: '.jp-Notebook .jp-Cell',
      rank: 12
    });
    palette?.addItem({ command: ASK_COMMAND, category: CATEGORY });
    tracker.forEach(watchErrors);
    tracker.widgetAdded.connect((_, panel) => watchErrors(panel));
  }
};
