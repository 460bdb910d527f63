import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

// The plugin needs only the tokens from these packages; their real modules are ES modules jest does not load.
jest.mock('@jupyterlab/notebook', () => ({
  INotebookTracker: 'notebook-tracker',
  NotebookActions: { executionScheduled: { connect: () => undefined } }
}));
jest.mock('@jupyterlab/apputils', () => ({
  ICommandPalette: 'command-palette'
}));
jest.mock('@jupyterlab/rendermime', () => ({
  IRenderMimeRegistry: 'rendermime'
}));
jest.mock('@jupyterlab/codemirror', () => ({
  IEditorExtensionRegistry: 'editor-extensions'
}));

import plugins, { RUN_MIME_TYPE } from '../src/index';
import type { IUndoRunner } from '../src/undo';
import { createRendererFactory, rendererFactory } from '../src/widget';
import { rawFixture } from './helpers';

const [plugin] = plugins; // the run renderer; the live-edits plugin is tested in liveedits.spec.ts

function model(data: unknown): IRenderMime.IMimeModel {
  return {
    trusted: true,
    data: { [RUN_MIME_TYPE]: data } as IRenderMime.IMimeModel['data'],
    metadata: {},
    setData: () => undefined
  };
}

const options: IRenderMime.IRendererOptions = {
  mimeType: RUN_MIME_TYPE,
  sanitizer: { sanitize: dirty => dirty },
  resolver: null,
  linkHandler: null,
  latexTypesetter: null
};

/** Activate the plugin against a registry that records what it is given. */
function activate(
  tracker: unknown
): Array<{ factory: IRenderMime.IRendererFactory; rank?: number }> {
  const added: Array<{ factory: IRenderMime.IRendererFactory; rank?: number }> =
    [];
  const registry = {
    addFactory: (factory: IRenderMime.IRendererFactory, rank?: number) =>
      added.push({ factory, rank })
  } as unknown as IRenderMimeRegistry;
  void plugin.activate({} as JupyterFrontEnd, registry, tracker);
  return added;
}

describe('the plugin', () => {
  it('starts by itself, needs the rendermime registry and uses notebooks if there are any', () => {
    expect(plugin.id).toBe('architect-nb:run-renderer');
    expect(plugin.autoStart).toBe(true);
    expect(plugin.requires).toEqual(['rendermime']);
    expect(plugin.optional).toEqual(['notebook-tracker']);
  });

  it('registers safe renderers for the run and reload MIME types at rank 40, with or without notebooks', () => {
    for (const tracker of [null, { find: () => undefined }]) {
      const added = activate(tracker);
      expect(added).toHaveLength(2);
      expect(added.map(a => a.rank)).toEqual([40, 40]);
      expect(added.map(a => a.factory.mimeTypes)).toEqual([
        ['application/vnd.architect-nb.run+json'],
        ['application/vnd.architect-nb.reload+json']
      ]);
      expect(added.every(a => a.factory.safe)).toBe(true);
    }
  });

  it('gives the renderer an undo button that finds the notebook only once attached', async () => {
    const panel = document.createElement('div');
    document.body.replaceChildren(panel);
    const [{ factory }] = activate({
      find: (test: (panel: { node: HTMLElement }) => boolean) =>
        test({ node: panel }) ? { node: panel } : undefined
    });
    const widget = factory.createRenderer(options);
    await widget.renderModel(model(rawFixture('every_tool_session')));
    const undo =
      widget.node.querySelector<HTMLButtonElement>('.anb-undo-button');
    expect(undo?.disabled).toBe(true);
    Widget.attach(widget, panel);
    expect(undo?.disabled).toBe(false);
    Widget.detach(widget);
  });
});

describe('the renderer', () => {
  it('renders a real transcript into the widget node', async () => {
    const widget = rendererFactory.createRenderer(options);
    await widget.renderModel(model(rawFixture('every_tool_session')));
    expect(widget.node.classList).toContain('anb-RunRenderer');
    expect(widget.node.querySelectorAll('details.anb-step')).toHaveLength(6);
  });

  it('re-checks the undo button when attached, and keeps it off without a runner', async () => {
    const runner: IUndoRunner = {
      canRun: node => node.isConnected,
      run: async () => ({ ok: true, message: '' })
    };
    for (const [factory, enabled] of [
      [createRendererFactory(runner), true],
      [rendererFactory, false]
    ] as const) {
      const widget = factory.createRenderer(options);
      await widget.renderModel(model(rawFixture('every_tool_session')));
      Widget.attach(widget, document.body);
      const undo =
        widget.node.querySelector<HTMLButtonElement>('.anb-undo-button');
      expect(undo?.disabled).toBe(!enabled);
      Widget.detach(widget);
    }
  });

  it('says what is wrong with a payload it cannot show', async () => {
    const widget = rendererFactory.createRenderer(options);
    await widget.renderModel(model({ version: 9, events: [] }));
    expect(widget.node.querySelector('.anb-render-error')?.textContent).toMatch(
      /version 9 is not supported/
    );
  });
});
