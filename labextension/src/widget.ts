/** The Lumino widget JupyterLab creates for each run-transcript output. */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { h } from './dom';
import { renderRun } from './timeline';
import { parsePayload, PayloadError, RUN_MIME_TYPE } from './types';
import type { RunControls } from './review';
import type { IUndoRunner } from './undo';

/** The CSS class on every run renderer. */
const CLASS_NAME = 'anb-RunRenderer';

export class RunRenderer extends Widget implements IRenderMime.IRenderer {
  private controls: RunControls | null = null;

  constructor(
    private readonly options: IRenderMime.IRendererOptions,
    private readonly undoRunner: IUndoRunner | null = null
  ) {
    super();
    this.addClass(CLASS_NAME);
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[this.options.mimeType ?? RUN_MIME_TYPE];
    try {
      const payload = parsePayload(data);
      this.controls = await renderRun(
        payload,
        this.node,
        {
          markdownParser: this.options.markdownParser,
          sanitizer: this.options.sanitizer
        },
        this.undoRunner
      );
    } catch (error) {
      this.controls = null;
      const message =
        error instanceof PayloadError
          ? error.message
          : `Could not render this run: ${String(error)}`;
      this.node.replaceChildren(h('div', 'anb-render-error', message));
    }
  }

  /** Only in the page can the buttons tell whether a notebook's kernel is at hand. */
  protected onAfterAttach(): void {
    this.controls?.update();
  }
}

/**
 * A factory of `RunRenderer`s for the run-transcript MIME type. With an
 * `undoRunner`, runs that changed files get working Revert, Revert all and
 * rewind buttons; without one, the buttons are disabled and say which magic
 * to run instead.
 */
export function createRendererFactory(
  undoRunner: IUndoRunner | null = null
): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [RUN_MIME_TYPE],
    defaultRank: 40,
    createRenderer: options => new RunRenderer(options, undoRunner)
  };
}

/** The factory without a kernel: for contexts that only render. */
export const rendererFactory = createRendererFactory();
