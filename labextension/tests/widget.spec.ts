import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import extension, { RUN_MIME_TYPE } from '../src/index';
import { rendererFactory } from '../src/widget';
import { rawFixture } from './helpers';

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

describe('the MIME extension', () => {
  it('registers a JSON renderer for the run MIME type', () => {
    expect(extension.id).toBe('architect-nb:run-renderer');
    expect(extension.dataType).toBe('json');
    expect(rendererFactory.mimeTypes).toEqual([
      'application/vnd.architect-nb.run+json'
    ]);
    expect(rendererFactory.safe).toBe(true);
  });

  it('renders a real transcript into the widget node', async () => {
    const widget = rendererFactory.createRenderer(options);
    await widget.renderModel(model(rawFixture('whole_job')));
    expect(widget.node.classList).toContain('anb-RunRenderer');
    expect(widget.node.querySelectorAll('details.anb-step')).toHaveLength(6);
  });

  it('says what is wrong with a payload it cannot show', async () => {
    const widget = rendererFactory.createRenderer(options);
    await widget.renderModel(model({ version: 9, events: [] }));
    expect(widget.node.querySelector('.anb-render-error')?.textContent).toMatch(
      /version 9 is not supported/
    );
  });
});
