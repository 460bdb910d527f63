/** The provenance plugin registers one editor extension, for cell editors only. */

import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { IEditorExtensionRegistry } from '@jupyterlab/codemirror';
import { Signal } from '@lumino/signaling';

// Only the tokens are needed; the real modules are ES modules jest does not load.
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

import plugins from '../src/index';

describe('the provenance plugin', () => {
  const plugin = plugins.find(p => p.id === 'architect-nb:provenance');

  it('needs the editor extension registry only if there is one', () => {
    expect(plugin?.autoStart).toBe(true);
    expect(plugin?.optional).toEqual(['editor-extensions']);
    expect(() => plugin?.activate({} as JupyterFrontEnd, null)).not.toThrow();
  });

  it('gives cell editors the extension, and other editors none', () => {
    const added: Parameters<IEditorExtensionRegistry['addExtension']>[0][] = [];
    const registry = {
      addExtension: (factory: (typeof added)[0]) => added.push(factory)
    };
    plugin?.activate({} as JupyterFrontEnd, registry);
    expect(added.map(f => f.name)).toEqual(['architect-nb:provenance']);
    const factory = added[0].factory;
    const file = { sharedModel: { getSource: () => 'x = 1\n' } };
    expect(factory({ inline: false, model: file } as never)).toBeNull();
    const cell = {
      sharedModel: {
        getMetadata: () => undefined,
        metadataChanged: new Signal<unknown, unknown>({})
      }
    };
    const extension = factory({ inline: false, model: cell } as never);
    expect(extension).not.toBeNull();
    expect(extension?.instance(undefined)).toBeTruthy();
    expect(extension?.reconfigure(undefined)).toBeNull();
  });
});
