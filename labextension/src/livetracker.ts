/**
 * The live-edits plugin: the notebooks of JupyterLab's (or Notebook 7's)
 * notebook tracker as the kernel sees them, and one `KernelLink` per kernel
 * the tracked notebooks are connected to (`liveedits.ts`). Each document also
 * says which code cells were edited since they ran (JupyterLab's own
 * `isDirty`), and which cell the person had selected when a cell was run
 * (`SelectionLog`), so an `%%architect` run knows what "the selected cell" is.
 */

import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import type { ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import {
  INotebookTracker,
  Notebook,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';

import {
  DocumentHub,
  DocumentSource,
  IOpenDocument,
  IPeerPort,
  KernelLink
} from './liveedits';
import type { IGuard } from './livecells';

type Json = { [key: string]: unknown };

function pageConfig(): Json {
  try {
    const node = document.getElementById('jupyter-config-data');
    const config: unknown = JSON.parse(node?.textContent ?? '{}');
    return typeof config === 'object' && config !== null
      ? (config as Json)
      : {};
  } catch {
    return {};
  }
}

function randomId(): string {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');
}

/** What the person is doing in the views of one document: typing in a cell, running cells. */
export function guardOf(panels: NotebookPanel[]): IGuard {
  let editing: string | null = null;
  for (const panel of panels) {
    const notebook = panel.content;
    const active = notebook.activeCell;
    if (
      active !== null &&
      notebook.mode === 'edit' &&
      document.hasFocus() &&
      active.editor?.hasFocus() === true
    ) {
      editing = active.model.id;
    }
  }
  const busy = new Set<string>();
  const cells = panels[0]?.context.model?.cells;
  for (let i = 0; cells !== undefined && i < cells.length; i++) {
    const cell = cells.get(i);
    if (
      cell.type === 'code' &&
      (cell as ICodeCellModel).executionState === 'running'
    ) {
      busy.add(cell.id);
    }
  }
  return { editing, busy };
}

/** How many runs' selections are kept (a run asks for its own as it starts). */
const SELECTIONS_KEPT = 200;

/**
 * Which cell the person had selected when each cell was run. Run with
 * Shift+Enter, the running cell is the active one: the selection is then the
 * cell that was active before it (the person moved from there to write the
 * `%%architect` cell). Run All keeps the active cell where the person left it.
 * Runs are kept by notebook view and cell id: notebooks copied from one
 * template share their cell ids.
 */
export class SelectionLog {
  private readonly active = new WeakMap<Notebook, string | null>();
  private readonly before = new WeakMap<Notebook, string | null>();
  private readonly views = new WeakMap<Notebook, number>();
  /** By `${view} ${cellId}`: the selection, and when (the latest of several views wins). */
  private readonly atRun = new Map<
    string,
    { selected: string | null; at: number }
  >();
  private clock = 0;
  private viewCount = 0;

  private key(notebook: Notebook, cellId: string): string {
    let view = this.views.get(notebook);
    if (view === undefined) {
      view = ++this.viewCount;
      this.views.set(notebook, view);
    }
    return `${view} ${cellId}`;
  }

  watch(notebook: Notebook): void {
    this.active.set(notebook, notebook.activeCell?.model.id ?? null);
    notebook.activeCellChanged.connect((changed, cell) => {
      const now = cell?.model.id ?? null;
      const was = this.active.get(changed) ?? null;
      if (now !== was) {
        this.before.set(changed, was);
        this.active.set(changed, now);
      }
    });
  }

  scheduled(notebook: Notebook, cellId: string): void {
    const active = notebook.activeCell?.model.id ?? null;
    const selected =
      active !== null && active !== cellId
        ? active
        : (this.before.get(notebook) ?? null);
    const key = this.key(notebook, cellId);
    this.atRun.delete(key);
    this.atRun.set(key, {
      selected: selected === cellId ? null : selected,
      at: ++this.clock
    });
    while (this.atRun.size > SELECTIONS_KEPT) {
      const oldest = this.atRun.keys().next().value;
      if (oldest === undefined) {
        break;
      }
      this.atRun.delete(oldest);
    }
  }

  /** The selection when `cellId` was last run in one of `notebooks` (the views of one document). */
  selectedWhenRun(
    notebooks: readonly Notebook[],
    cellId: string
  ): string | null {
    let latest: { selected: string | null; at: number } | undefined;
    for (const notebook of notebooks) {
      const view = this.views.get(notebook);
      const run =
        view === undefined ? undefined : this.atRun.get(`${view} ${cellId}`);
      if (run !== undefined && (latest === undefined || run.at > latest.at)) {
        latest = run;
      }
    }
    return latest?.selected ?? null;
  }
}

function codeModels(panel: NotebookPanel): ICodeCellModel[] {
  const cells = panel.context.model?.cells;
  const models: ICodeCellModel[] = [];
  for (let i = 0; cells !== undefined && i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === 'code') {
      models.push(cell as ICodeCellModel);
    }
  }
  return models;
}

/** The documents of the tracker's notebooks: two views of one notebook are one document. */
export function trackerDocuments(
  tracker: INotebookTracker,
  selections: SelectionLog | null = null
): DocumentSource {
  const tokens = new WeakMap<object, string>();
  return () => {
    const byContext = new Map<object, NotebookPanel[]>();
    tracker.forEach(panel => {
      if (panel.isDisposed || !panel.context.isReady) {
        return;
      }
      const views = byContext.get(panel.context) ?? [];
      views.push(panel);
      byContext.set(panel.context, views);
    });
    const docs: IOpenDocument[] = [];
    for (const [context, panels] of byContext) {
      const { model } = panels[0].context;
      if (!tokens.has(context)) {
        tokens.set(context, randomId());
      }
      docs.push({
        token: tokens.get(context) as string,
        path: panels[0].context.localPath,
        shared: model.collaborative === true,
        readOnly: panels[0].context.contentsModel?.writable === false,
        model: model.sharedModel,
        kernel: () => panels[0].sessionContext.session?.kernel?.id ?? null,
        guard: () => guardOf(panels),
        toJSON: () => model.toJSON() as unknown as nbformat.INotebookContent,
        dirty: () =>
          codeModels(panels[0])
            .filter(cell => cell.isDirty)
            .map(cell => cell.id),
        selectedWhenRun: cellId =>
          selections?.selectedWhenRun(
            panels.map(panel => panel.content),
            cellId
          ) ?? null,
        markRun: cellId => {
          const cell = codeModels(panels[0]).find(c => c.id === cellId);
          if (cell !== undefined) {
            // CodeCellModel has the setter; ICodeCellModel declares it read-only.
            (cell as unknown as { isDirty: boolean }).isDirty = false;
          }
        }
      });
    }
    return docs;
  };
}

/** The other tabs of this browser on the same server. */
function broadcastPort(baseUrl: string): IPeerPort | null {
  if (typeof BroadcastChannel === 'undefined') {
    return null;
  }
  const channel = new BroadcastChannel(`architect-nb-documents ${baseUrl}`);
  return {
    post: message => channel.postMessage(message),
    listen: handler => {
      channel.onmessage = event => {
        const data: unknown = event.data;
        if (typeof data === 'object' && data !== null) {
          handler(data as Json);
        }
      };
    }
  };
}

/** Keep one `KernelLink` per kernel that a tracked notebook is connected to. */
export function startLiveEdits(
  where: string,
  tracker: INotebookTracker
): DocumentHub {
  const config = pageConfig();
  const app = randomId();
  const root = typeof config.serverRoot === 'string' ? config.serverRoot : '';
  const baseUrl = typeof config.baseUrl === 'string' ? config.baseUrl : '/';
  const outputs = config.serverSideExecution === 'true' ? 'server' : 'kernel';
  const selections = new SelectionLog();
  NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
    selections.scheduled(notebook, cell.model.id);
  });
  const hub = new DocumentHub(
    app,
    where,
    trackerDocuments(tracker, selections),
    broadcastPort(baseUrl)
  );
  const links = new Map<string, KernelLink>();

  const refresh = (): void => {
    const byKernel = new Map<string, NotebookPanel[]>();
    tracker.forEach(panel => {
      const kernel = panel.sessionContext.session?.kernel;
      if (!panel.isDisposed && kernel && !kernel.isDisposed) {
        byKernel.set(kernel.id, [...(byKernel.get(kernel.id) ?? []), panel]);
      }
    });
    for (const [id, link] of links) {
      const panels = byKernel.get(id) ?? [];
      if (
        link.kernel.isDisposed ||
        !panels.some(p => p.sessionContext.session?.kernel === link.kernel)
      ) {
        link.dispose();
        links.delete(id);
      }
    }
    for (const [id, panels] of byKernel) {
      const panel = panels[0];
      const kernel = panel.sessionContext.session?.kernel;
      if (!links.has(id) && kernel) {
        links.set(
          id,
          new KernelLink(kernel, hub, {
            app,
            where,
            root,
            outputs,
            session: () => (panel.isDisposed ? '' : panel.sessionContext.path)
          })
        );
      }
    }
  };

  const watch = (panel: NotebookPanel): void => {
    selections.watch(panel.content);
    panel.sessionContext.kernelChanged.connect(refresh);
    panel.sessionContext.sessionChanged.connect(refresh);
    panel.disposed.connect(refresh);
    refresh();
  };
  tracker.forEach(watch);
  tracker.widgetAdded.connect((_, panel) => watch(panel));
  window.addEventListener('pagehide', () => {
    hub.leave();
    for (const link of links.values()) {
      link.dispose();
    }
    links.clear();
  });
  return hub;
}

export const liveEditsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'architect-nb:live-edits',
  description:
    "Lets architect-nb's notebook tools read and change the notebooks open here, through their document model.",
  autoStart: true,
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker | null) => {
    if (tracker !== null) {
      startLiveEdits(app.name, tracker);
    }
  }
};
