/**
 * architect-nb's JupyterLab extension: a renderer for run transcripts
 * (`application/vnd.architect-nb.run+json`) whose review list, Revert and
 * rewind buttons run `%architect undo` and `%architect revert` in the
 * notebook's kernel, and one for the reload note under a run
 * (`application/vnd.architect-nb.reload+json`, its button runs
 * `%architect reload`); live edits (`livetracker.ts`); and the entry points
 * (`entrypoints.ts`: "Fix with architect", "Ask architect"); and marks beside
 * the lines the agent wrote in cell editors (`provenance.ts`). It is a regular plugin rather than a MIME extension
 * because a MIME extension cannot reach a kernel.
 */

import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  IConfigurableExtension,
  IEditorExtensionRegistry
} from '@jupyterlab/codemirror';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { entryPointsPlugin } from './entrypoints';
import { notebookUndoRunner } from './kernelundo';
import { liveEditsPlugin } from './livetracker';
import { cellOf, provenanceExtension } from './provenance';
import { createReloadFactory } from './reload';
import { createRendererFactory } from './widget';

export { RUN_MIME_TYPE } from './types';
export { RunRenderer, createRendererFactory, rendererFactory } from './widget';
export type { IUndoResult, IUndoRunner, UndoAction } from './undo';

/** The renderer's rank, as the MIME extension had it: ahead of JSON (50), behind HTML and Markdown. */
export const RENDERER_RANK = 40;

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'architect-nb:run-renderer',
  description:
    'Renders architect-nb runs as a timeline of steps, tool calls, diffs and costs, with review, revert and rewind.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    notebooks: INotebookTracker | null
  ) => {
    const runner = notebooks === null ? null : notebookUndoRunner(notebooks);
    rendermime.addFactory(createRendererFactory(runner), RENDERER_RANK);
    rendermime.addFactory(createReloadFactory(runner), RENDERER_RANK);
  }
};

/** The marks beside the agent's lines, in every cell editor (the registry makes one per editor). */
const provenancePlugin: JupyterFrontEndPlugin<void> = {
  id: 'architect-nb:provenance',
  description:
    'Marks in the gutter of cell editors the lines the agent wrote, as the cell’s provenance record says.',
  autoStart: true,
  optional: [IEditorExtensionRegistry],
  activate: (
    app: JupyterFrontEnd,
    registry: IEditorExtensionRegistry | null
  ) => {
    registry?.addExtension({
      name: 'architect-nb:provenance',
      factory: options => {
        const cell = cellOf(options.model);
        if (cell === null) {
          return null; // a file or console editor: no cell metadata, no record
        }
        const extension = provenanceExtension(cell);
        // Immutable, as EditorExtensionRegistry.createImmutableExtension makes it.
        const configurable: IConfigurableExtension<undefined> = {
          instance: () => extension,
          reconfigure: () => null
        };
        return configurable;
      }
    });
  }
};

export default [plugin, liveEditsPlugin, entryPointsPlugin, provenancePlugin];
