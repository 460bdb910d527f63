/** The Lumino widget JupyterLab creates for each run-transcript output. */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { h } from './dom';
import { renderRun } from './timeline';
import { parsePayload, PayloadError, RUN_MIME_TYPE } from './types';

/** The CSS class on every run renderer. */
const CLASS_NAME = 'anb-RunRenderer';

export class RunRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(private readonly options: IRenderMime.IRendererOptions) {
    super();
    this.addClass(CLASS_NAME);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[this.options.mimeType ?? RUN_MIME_TYPE];
    try {
      const payload = parsePayload(data);
      await renderRun(payload, this.node, {
        markdownParser: this.options.markdownParser,
        sanitizer: this.options.sanitizer
      });
    } catch (error) {
      const message =
        error instanceof PayloadError
          ? error.message
          : `Could not render this run: ${String(error)}`;
      this.node.replaceChildren(h('div', 'anb-render-error', message));
    }
  }
}

/** Creates a `RunRenderer` for the run-transcript MIME type. */
export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [RUN_MIME_TYPE],
  defaultRank: 40,
  createRenderer: options => new RunRenderer(options)
};
