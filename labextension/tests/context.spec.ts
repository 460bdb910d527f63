/**
 * What the notebook context and run_cell need from a front end: the running
 * cell's notebook found by its id (`locate`), reads that say which cells were
 * edited since they ran and what was selected when a cell ran, the `outputs`
 * operation; the selection log; the entry points ("Fix with architect", "Ask
 * architect"); and the reload note's button.
 */

import type { YCodeCell, YNotebook } from '@jupyter/ydoc';
import type * as nbformat from '@jupyterlab/nbformat';
import { Signal } from '@lumino/signaling';

jest.mock('@jupyterlab/notebook', () => ({
  INotebookTracker: 'notebook-tracker',
  NotebookActions: { executionScheduled: { connect: () => undefined } }
}));
jest.mock('@jupyterlab/apputils', () => ({
  ICommandPalette: 'command-palette'
}));

import {
  askTask,
  decorateErrors,
  fixTask,
  FIX_BUTTON_CLASS,
  insertArchitectCell
} from '../src/entrypoints';
import { applyOps, CellOpError, IGuard, parseOps } from '../src/livecells';
import { DocumentHub, IOpenDocument } from '../src/liveedits';
import { SelectionLog } from '../src/livetracker';
import { createReloadFactory, RELOAD_MIME_TYPE } from '../src/reload';
import { kernelCommand, typedMagic, IUndoRunner } from '../src/undo';
import { sharedNotebook } from './livenotebook';

type Json = { [key: string]: unknown };

const ERROR: nbformat.IError = {
  output_type: 'error',
  ename: 'KeyError',
  evalue: "'amont'",
  traceback: ['KeyError: ...']
};

class Doc implements IOpenDocument {
  editing: string | null = null;
  busy = new Set<string>();
  shared = false;
  readOnly = false;
  edited = new Set<string>(['b']);
  runs = new Map<string, string | null>();
  marked: string[] = [];

  constructor(
    readonly token: string,
    public path: string,
    readonly model: YNotebook
  ) {}

  guard(): IGuard {
    return { editing: this.editing, busy: this.busy };
  }

  toJSON(): nbformat.INotebookContent {
    return this.model.toJSON();
  }

  dirty(): string[] {
    return [...this.edited];
  }

  selectedWhenRun(cellId: string): string | null {
    return this.runs.get(cellId) ?? null;
  }

  markRun(cellId: string): void {
    this.marked.push(cellId);
    this.edited.delete(cellId);
  }
}

function notebook(): YNotebook {
  return sharedNotebook([
    { id: 'a', source: 'a = 1\n' },
    { id: 'b', source: "d['amont']\n", outputs: [ERROR] },
    { id: 'm', source: '# notes', type: 'markdown' },
    { id: 'arch', source: '%%architect\nfix the error above' }
  ]);
}

describe('the outputs operation', () => {
  it('replaces a code cell’s outputs and execution count, and nothing else', () => {
    const model = notebook();
    const result: nbformat.IExecuteResult = {
      output_type: 'execute_result',
      execution_count: 12,
      data: { 'text/plain': '3' },
      metadata: {}
    };
    const ops = parseOps([
      {
        op: 'outputs',
        id: 'b',
        outputs: [result],
        execution_count: 12,
        expect: "d['amont']\n"
      }
    ]);
    applyOps(model, ops, { editing: null, busy: new Set() });
    const cell = model.cells[1] as YCodeCell;
    expect(cell.execution_count).toBe(12);
    expect(cell.getOutputs()).toEqual([result]);
    expect(cell.getSource()).toBe("d['amont']\n");
  });

  it('is refused for a cell being typed in, one edited since it ran, or a Markdown cell', () => {
    const model = notebook();
    const op = (id: string, expect: string) =>
      parseOps([
        { op: 'outputs', id, outputs: [], execution_count: 3, expect }
      ]);
    const attempt = (ops: ReturnType<typeof parseOps>, guard: IGuard) => {
      try {
        applyOps(model, ops, guard);
        return 'applied';
      } catch (error) {
        return (error as CellOpError).code;
      }
    };
    const free = { editing: null, busy: new Set<string>() };
    expect(attempt(op('b', "d['amont']\n"), { ...free, editing: 'b' })).toBe(
      'typing'
    );
    expect(attempt(op('b', 'something else'), free)).toBe('changed');
    expect(attempt(op('m', '# notes'), free)).toBe('bad');
    expect(attempt(op('gone', ''), free)).toBe('gone');
    expect(() => parseOps([{ op: 'outputs', id: 'b', outputs: 'x' }])).toThrow(
      CellOpError
    );
  });
});

describe('DocumentHub for the notebook context', () => {
  it('locates the notebook that holds a cell, here and in other tabs', async () => {
    const doc = new Doc('t1', 'nb/analysis.ipynb', notebook());
    const hub = new DocumentHub('app1', 'JupyterLab', () => [doc]);
    expect(await hub.handle({ type: 'locate', cell: 'arch' })).toEqual({
      type: 'located',
      docs: [
        {
          app: 'app1',
          doc: 't1',
          path: 'nb/analysis.ipynb',
          shared: false,
          where: 'JupyterLab'
        }
      ]
    });
    expect(await hub.handle({ type: 'locate', cell: 'nowhere' })).toEqual({
      type: 'located',
      docs: []
    });
  });

  it('reads the cells edited since they ran and what was selected when a cell ran', async () => {
    const doc = new Doc('t1', 'nb.ipynb', notebook());
    doc.runs.set('arch', 'b');
    const hub = new DocumentHub('app1', 'JupyterLab', () => [doc]);
    const target = { app: 'app1', doc: 't1', path: 'nb.ipynb' };
    const read = await hub.handle({ type: 'read', running: 'arch', ...target });
    expect(read.dirty).toEqual(['b']);
    expect(read.selected).toBe('b');
    const plain = await hub.handle({ type: 'read', ...target });
    expect(plain.selected).toBeUndefined();
  });

  it('marks a cell given its outputs as run', async () => {
    const doc = new Doc('t1', 'nb.ipynb', notebook());
    const hub = new DocumentHub('app1', 'JupyterLab', () => [doc]);
    const answer = await hub.handle({
      type: 'apply',
      app: 'app1',
      doc: 't1',
      path: 'nb.ipynb',
      ops: [
        {
          op: 'outputs',
          id: 'b',
          outputs: [],
          execution_count: 9,
          expect: "d['amont']\n"
        }
      ]
    });
    expect(answer).toEqual({ ok: true });
    expect(doc.marked).toEqual(['b']);
    expect(doc.dirty()).toEqual([]);
  });
});

/** Enough of a Notebook for the selection log: its active cell and the signal. */
class FakeNotebook {
  activeCell: { model: { id: string } } | null = null;
  readonly activeCellChanged = new Signal<
    FakeNotebook,
    { model: { id: string } } | null
  >(this);

  activate(id: string): void {
    this.activeCell = { model: { id } };
    this.activeCellChanged.emit(this.activeCell);
  }
}

describe('SelectionLog', () => {
  type Watched = Parameters<SelectionLog['watch']>[0];

  it('takes the cell selected before the run for a cell run with Shift+Enter, and the active one for Run All', () => {
    const log = new SelectionLog();
    const nb = new FakeNotebook();
    const views = [nb as unknown as Watched];
    log.watch(nb as unknown as Watched);
    nb.activate('b'); // the person looks at the failing cell
    nb.activate('arch'); // then writes and runs the %%architect cell
    log.scheduled(nb as unknown as Watched, 'arch');
    expect(log.selectedWhenRun(views, 'arch')).toBe('b');
    nb.activate('a'); // Run All from cell a
    log.scheduled(nb as unknown as Watched, 'arch');
    expect(log.selectedWhenRun(views, 'arch')).toBe('a');
    expect(log.selectedWhenRun(views, 'never-ran')).toBeNull();
  });

  it('keeps the runs of notebooks that share cell ids apart, and takes the latest of one document’s views', () => {
    const log = new SelectionLog();
    const [exam, copy, examView] = [0, 1, 2].map(() => {
      const nb = new FakeNotebook();
      log.watch(nb as unknown as Watched);
      return nb;
    });
    const run = (nb: FakeNotebook, selected: string) => {
      nb.activate(selected);
      nb.activate('arch');
      log.scheduled(nb as unknown as Watched, 'arch');
    };
    run(exam, 'a');
    run(copy, 'b'); // the same cell id, in a notebook copied from the same template
    const of = (...nbs: FakeNotebook[]) =>
      log.selectedWhenRun(nbs as unknown as Watched[], 'arch');
    expect(of(exam)).toBe('a');
    expect(of(copy)).toBe('b');
    run(examView, 'm'); // the exam again, from its second view
    expect(of(exam, examView)).toBe('m');
    expect(of(new FakeNotebook())).toBeNull();
  });
});

describe('the entry points', () => {
  it('write tasks that name the cell as the agent does', () => {
    expect(fixTask(4, 7, 'KeyError', "'amont'\nmore")).toBe(
      "Fix the error in cell 4 [7] (KeyError: 'amont')."
    );
    expect(fixTask(2, null, 'NameError', '')).toBe(
      'Fix the error in cell 2 (NameError).'
    );
    expect(askTask(3, 5)).toBe('About cell 3 [5]: ');
  });

  /** A notebook panel with code cells whose outputs are plain nodes. */
  function panel(outputs: nbformat.IOutput[][]): {
    panel: Parameters<typeof decorateErrors>[0];
    inserted: Array<{ at: number; cell: Json }>;
    nodes: HTMLElement[][];
    notebook: Json;
  } {
    const inserted: Array<{ at: number; cell: Json }> = [];
    const nodes: HTMLElement[][] = [];
    const widgets = outputs.map((cellOutputs, index) => {
      const children = cellOutputs.map(() => ({
        node: document.createElement('div')
      }));
      nodes.push(children.map(c => c.node));
      return {
        model: { type: 'code', executionCount: index + 1 },
        outputArea: {
          model: {
            length: cellOutputs.length,
            get: (i: number) => ({
              type: cellOutputs[i].output_type,
              toJSON: () => cellOutputs[i]
            })
          },
          widgets: children
        }
      };
    });
    const notebook: Json = {
      widgets,
      model: {
        sharedModel: {
          insertCell: (at: number, cell: Json) => inserted.push({ at, cell })
        }
      },
      activeCellIndex: 0,
      activeCell: null,
      mode: 'command',
      deselectAll: () => undefined
    };
    return {
      panel: { content: notebook } as unknown as Parameters<
        typeof decorateErrors
      >[0],
      inserted,
      nodes,
      notebook
    };
  }

  it('put one "Fix with architect" button on each error output, which inserts the fix cell below', () => {
    const stream: nbformat.IStream = {
      output_type: 'stream',
      name: 'stdout',
      text: 'hi'
    };
    const {
      panel: p,
      inserted,
      nodes,
      notebook
    } = panel([[stream], [stream, ERROR]]);
    decorateErrors(p);
    decorateErrors(p); // again: still one button
    expect(nodes[0][0].querySelector(`.${FIX_BUTTON_CLASS}`)).toBeNull();
    const buttons = nodes[1][1].querySelectorAll(`.${FIX_BUTTON_CLASS}`);
    expect(buttons).toHaveLength(1);
    expect(buttons[0].textContent).toBe('Fix with architect');
    (buttons[0] as HTMLButtonElement).click();
    expect(inserted).toEqual([
      {
        at: 2,
        cell: {
          cell_type: 'code',
          source:
            "%%architect\nFix the error in cell 1 [2] (KeyError: 'amont').",
          metadata: { trusted: true }
        }
      }
    ]);
    expect(notebook.activeCellIndex).toBe(2);
    expect(notebook.mode).toBe('edit');
  });

  it('insert an Ask cell below any cell', () => {
    const { panel: p, inserted } = panel([[]]);
    insertArchitectCell(p as never, 0, askTask(0, 1));
    expect(inserted[0].cell.source).toBe('%%architect\nAbout cell 0 [1]: ');
  });
});

describe('the reload note', () => {
  it('offers a Reload button that runs %architect reload, unless autoreload covers it', async () => {
    expect(kernelCommand({ kind: 'reload' })).toBe('reload');
    expect(typedMagic({ kind: 'reload' })).toBe('%architect reload');
    const asked: unknown[] = [];
    const runner: IUndoRunner = {
      canRun: () => true,
      run: async action => {
        asked.push(action);
        return { ok: true, message: 'Reloaded shop.cart.' };
      }
    };
    const factory = createReloadFactory(runner);
    expect(factory.mimeTypes).toEqual([RELOAD_MIME_TYPE]);
    const renderer = factory.createRenderer({
      mimeType: RELOAD_MIME_TYPE
    } as never);
    const text = 'The run changed modules this kernel had already imported.';
    await renderer.renderModel({
      data: { [RELOAD_MIME_TYPE]: { text, autoreload: null, modules: [] } }
    } as never);
    expect(renderer.node.textContent).toContain(text);
    const button = renderer.node.querySelector('button');
    expect(button?.textContent).toBe('Reload');
    button?.click();
    await new Promise(done => setTimeout(done, 0));
    expect(asked).toEqual([{ kind: 'reload' }]);

    const covered = factory.createRenderer({
      mimeType: RELOAD_MIME_TYPE
    } as never);
    await covered.renderModel({
      data: {
        [RELOAD_MIME_TYPE]: {
          text,
          autoreload: 'IPython autoreload is on.',
          modules: []
        }
      }
    } as never);
    expect(covered.node.querySelector('button')).toBeNull();
  });
});
