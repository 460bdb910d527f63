/**
 * The live-edits plugin: the notebooks of JupyterLab's (or Notebook 7's)
 * notebook tracker as the kernel sees them, and one `KernelLink` per kernel
 * the tracked notebooks are connected to (`liveedits.ts`).
 */

import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import type { ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

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

/** The documents of the tracker's notebooks: two views of one notebook are one document. */
export function trackerDocuments(tracker: INotebookTracker): DocumentSource {
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
        guard: () => guardOf(panels),
        toJSON: () => model.toJSON() as unknown as nbformat.INotebookContent
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
  const hub = new DocumentHub(
    app,
    where,
    trackerDocuments(tracker),
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
            session: () => (panel.isDisposed ? '' : panel.sessionContext.path)
          })
        );
      }
    }
  };

  const watch = (panel: NotebookPanel): void => {
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
