/**
 * The `IUndoRunner` of a JupyterLab session: finds the notebook that shows a
 * run and executes an undo, a rewind or a revert (`%architect undo RUN`,
 * `%architect undo RUN:STEP`, `%architect revert RUN b64:PATH`) in its kernel.
 * Only types are imported from JupyterLab, so tests can pass plain fakes.
 */

import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

import { IInspection, INSPECT_MIME_TYPE } from './inspector';
import {
  isValidRunId,
  isValidStep,
  IUndoResult,
  IUndoRunner,
  typedMagic,
  UndoAction,
  undoCode
} from './undo';

/** The metadata the kernel puts on the magic's `execute_result`. */
interface IUndoMetadata {
  level?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Read the magic's `execute_result`: the report, and whether it says the action failed. */
function readResult(
  content: KernelMessage.IExecuteResultMsg['content']
): IUndoResult {
  const text = content.data?.['text/plain'];
  const report = (
    Array.isArray(text) ? text.join('') : String(text ?? '')
  ).trim();
  const meta = content.metadata?.['architect_nb'];
  const level = isRecord(meta) ? (meta as IUndoMetadata).level : undefined;
  return {
    ok: level === 'info',
    message: report || 'The kernel gave no report.'
  };
}

/** Run `action` in `kernel` and read the kernel's answer; never rejects. */
export async function executeUndo(
  kernel: Kernel.IKernelConnection,
  action: UndoAction
): Promise<IUndoResult> {
  let code: string;
  try {
    code = undoCode(action);
  } catch (error) {
    return { ok: false, message: String(error) };
  }
  // Set from the IOPub callback, so typed here rather than narrowed to null.
  let answer = null as IUndoResult | null;
  try {
    const future = kernel.requestExecute({
      code,
      silent: false,
      store_history: false,
      stop_on_error: false,
      // Nothing in an undo asks for input; if something did, it must fail rather than wait for ever.
      allow_stdin: false
    });
    future.onIOPub = msg => {
      const type = msg.header.msg_type;
      if (type === 'execute_result') {
        answer = readResult((msg as KernelMessage.IExecuteResultMsg).content);
      } else if (type === 'error') {
        const { ename, evalue } = (msg as KernelMessage.IErrorMsg).content;
        answer = { ok: false, message: `${ename}: ${evalue}` };
      }
    };
    const reply = await future.done;
    const content = reply.content;
    if (content.status === 'error') {
      return answer !== null && !answer.ok
        ? answer
        : { ok: false, message: `${content.ename}: ${content.evalue}` };
    }
    if (content.status === 'aborted') {
      return { ok: false, message: 'The kernel aborted the request.' };
    }
  } catch (error) {
    return {
      ok: false,
      message: `The request did not finish in the kernel: ${String(error)}`
    };
  }
  return (
    answer ?? {
      ok: false,
      message: `The kernel did not report back; run ${typedMagic(action)} in a cell to see why.`
    }
  );
}

/** Ask the kernel for one step's request and reply (`%architect inspect RUN:STEP`); never rejects. */
export async function executeInspect(
  kernel: Kernel.IKernelConnection,
  runId: string,
  step: number
): Promise<IInspection> {
  if (!isValidRunId(runId) || !isValidStep(step)) {
    return {
      ok: false,
      message: 'Not a run and step the kernel can look up.',
      data: null
    };
  }
  const magic = `%architect inspect ${runId}:${step}`;
  let found: IInspection | null = null;
  try {
    const future = kernel.requestExecute({
      code: magic,
      silent: false,
      store_history: false,
      stop_on_error: false,
      allow_stdin: false
    });
    future.onIOPub = msg => {
      const type = msg.header.msg_type;
      if (type === 'execute_result') {
        const data = (msg as KernelMessage.IExecuteResultMsg).content.data;
        const text = data?.['text/plain'];
        found =
          data?.[INSPECT_MIME_TYPE] !== undefined
            ? { ok: true, message: '', data: data[INSPECT_MIME_TYPE] }
            : {
                ok: false,
                message: String(
                  Array.isArray(text) ? text.join('') : (text ?? '')
                ),
                data: null
              };
      } else if (type === 'error') {
        const { ename, evalue } = (msg as KernelMessage.IErrorMsg).content;
        found = { ok: false, message: `${ename}: ${evalue}`, data: null };
      }
    };
    await future.done;
  } catch (error) {
    return {
      ok: false,
      message: `The kernel did not answer: ${String(error)}`,
      data: null
    };
  }
  return (
    found ?? {
      ok: false,
      message: `The kernel did not report back; run ${magic} in a cell to see why.`,
      data: null
    }
  );
}

/** Undo, rewind and revert through the kernel of whichever tracked notebook contains the run's output. */
export function notebookUndoRunner(tracker: INotebookTracker): IUndoRunner {
  const panelOf = (node: HTMLElement): NotebookPanel | undefined =>
    tracker.find(panel => panel.node.contains(node));
  return {
    canRun: node => panelOf(node) !== undefined,
    run: async (action, node) => {
      const kernel = panelOf(node)?.sessionContext.session?.kernel;
      if (!kernel) {
        return {
          ok: false,
          message: `This notebook has no running kernel. Start one and click again (it runs ${typedMagic(action)}); the kernel says whether it still has this run's checkpoints.`
        };
      }
      return executeUndo(kernel, action);
    },
    inspect: async (runId, step, node) => {
      const kernel = panelOf(node)?.sessionContext.session?.kernel;
      if (!kernel) {
        return {
          ok: false,
          message: `This notebook has no running kernel; the request is in the run's transcript (%architect inspect ${runId}:${step} in the kernel that ran it).`,
          data: null
        };
      }
      return executeInspect(kernel, runId, step);
    }
  };
}
