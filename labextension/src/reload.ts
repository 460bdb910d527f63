/**
 * The note under a run that changed modules the kernel had already imported
 * (`application/vnd.architect-nb.reload+json`, from
 * `architect_nb/notebook/reload.py`): which modules, the cells that import
 * them, and a Reload button that runs `%architect reload` in the notebook's
 * kernel. Where IPython's autoreload covers them, it says so and offers no
 * button.
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { h } from './dom';
import { ActionButton, IUndoRunner, performAction } from './undo';

export const RELOAD_MIME_TYPE = 'application/vnd.architect-nb.reload+json';

interface IReloadOffer {
  text: string;
  autoreload: string | null;
}

function offerOf(data: unknown): IReloadOffer | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return null;
  }
  const record = data as Record<string, unknown>;
  if (typeof record.text !== 'string') {
    return null;
  }
  return {
    text: record.text,
    autoreload: typeof record.autoreload === 'string' ? record.autoreload : null
  };
}

export class ReloadRenderer extends Widget implements IRenderMime.IRenderer {
  private button: ActionButton | null = null;

  constructor(private readonly runner: IUndoRunner | null) {
    super();
    this.addClass('anb-reload');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const offer = offerOf(model.data[RELOAD_MIME_TYPE]);
    if (offer === null) {
      this.node.replaceChildren(
        h('div', 'anb-render-error', 'This reload note could not be read.')
      );
      return;
    }
    const text = h('div', 'anb-reload-text', offer.text);
    this.button =
      offer.autoreload === null
        ? new ActionButton(
            this.runner,
            {
              label: 'Reload',
              busy: 'Reloading…',
              done: 'Reloaded',
              title: 'Reload these modules in the kernel (%architect reload)',
              magic: '%architect reload',
              className: 'anb-reload-button'
            },
            performAction({ kind: 'reload' })
          )
        : null;
    this.node.replaceChildren(
      text,
      ...(this.button !== null ? [this.button.node] : [])
    );
  }

  protected onAfterAttach(): void {
    this.button?.update();
  }
}

export function createReloadFactory(
  runner: IUndoRunner | null = null
): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [RELOAD_MIME_TYPE],
    defaultRank: 40,
    createRenderer: () => new ReloadRenderer(runner)
  };
}
