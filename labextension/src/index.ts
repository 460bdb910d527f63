/**
 * architect-nb's JupyterLab extension: a MIME renderer for run transcripts
 * (`application/vnd.architect-nb.run+json`).
 */

import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { rendererFactory } from './widget';

export { RUN_MIME_TYPE } from './types';
export { RunRenderer, rendererFactory } from './widget';

const extension: IRenderMime.IExtension = {
  id: 'architect-nb:run-renderer',
  description:
    'Renders architect-nb runs as a timeline of steps, tool calls, diffs and costs.',
  rendererFactory,
  rank: 40,
  dataType: 'json'
};

export default extension;
