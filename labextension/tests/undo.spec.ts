/**
 * The kernel actions (undo, rewind, revert), the code each one sends, the
 * "Undo this run" button of transcripts without a review list, and the kernel
 * round trip behind them, with fake runners and kernels.
 */

import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

import { executeUndo, notebookUndoRunner } from '../src/kernelundo';
import type { RunControls } from '../src/review';
import { renderRun } from '../src/timeline';
import type { IRunPayload } from '../src/types';
import {
  base64url,
  isValidRunId,
  IUndoResult,
  IUndoRunner,
  typedMagic,
  typedPath,
  UndoAction,
  undoCode,
  visiblePath
} from '../src/undo';
import { fixture } from './helpers';

/** A runner whose answers the test hands out one at a time. */
class FakeRunner implements IUndoRunner {
  calls: Array<{ action: UndoAction; node: HTMLElement }> = [];
  inNotebook = true;
  private resolvers: Array<(result: IUndoResult) => void> = [];

  canRun(): boolean {
    return this.inNotebook;
  }

  run(action: UndoAction, node: HTMLElement): Promise<IUndoResult> {
    this.calls.push({ action, node });
    return new Promise(resolve => this.resolvers.push(resolve));
  }

  answer(result: IUndoResult): Promise<void> {
    const resolve = this.resolvers.shift();
    if (resolve === undefined) {
      throw new Error('no undo is waiting for an answer');
    }
    resolve(result);
    return new Promise(done => setTimeout(done, 0));
  }
}

function withRunId(payload: IRunPayload, runId: string): IRunPayload {
  return { ...payload, run_id: runId };
}

/**
 * A transcript without a review list (saved notebooks may hold them): no
 * `changes`, no `changed_files`, and a note on what undo does not cover.
 */
function legacy(payload: IRunPayload): IRunPayload {
  const events = payload.events.map(event => {
    if (event.kind === 'tool_result') {
      return { ...event, changed_files: [] };
    }
    if (event.kind === 'run_finished') {
      return {
        ...event,
        changes: [],
        undo_note: 'Undo does not cover files over the size limit (big.bin).'
      };
    }
    return event;
  });
  return { ...payload, events };
}

async function render(
  payload: IRunPayload,
  runner: IUndoRunner | null
): Promise<{ host: HTMLElement; undo: RunControls | null }> {
  const host = document.createElement('div');
  document.body.replaceChildren(host);
  const undo = await renderRun(payload, host, {}, runner);
  return { host, undo };
}

function button(host: HTMLElement): HTMLButtonElement {
  const found = host.querySelector<HTMLButtonElement>(
    '.anb-summary .anb-undo-button'
  );
  if (found === null) {
    throw new Error('no undo button');
  }
  return found;
}

describe('which runs get an undo button', () => {
  it('a finished run that changed files, from a kernel before the review list: "Undo this run"', async () => {
    const { host, undo } = await render(
      legacy(fixture('every_tool_session')),
      new FakeRunner()
    );
    expect(undo).not.toBeNull();
    expect(button(host).textContent).toBe('Undo this run');
    expect(button(host).disabled).toBe(false);
    // Its note is shown.
    expect(host.querySelector('.anb-summary .anb-note')?.textContent).toBe(
      'Undo does not cover files over the size limit (big.bin).'
    );
  });

  it('not a run with a review list: its Revert all is the one control for the whole run', async () => {
    const { host } = await render(
      fixture('every_tool_session'),
      new FakeRunner()
    );
    expect(
      host.querySelector('.anb-summary .anb-undo-button')?.textContent
    ).toBe('Revert all');
    const labels = Array.from(host.querySelectorAll('.anb-summary button')).map(
      b => b.textContent
    );
    expect(labels).not.toContain('Undo this run');
  });

  it('not a run that changed no files (denied everything, dry run)', async () => {
    for (const name of ['denied_and_blocked', 'dry_run'] as const) {
      const { host, undo } = await render(fixture(name), new FakeRunner());
      expect(undo).toBeNull();
      expect(host.querySelector('.anb-undo')).toBeNull();
    }
  });

  it('not a run that has not finished', async () => {
    const payload = fixture('every_tool_session');
    const running = {
      ...legacy(payload),
      events: payload.events.filter(event => event.kind !== 'run_finished')
    };
    const { host } = await render(running, new FakeRunner());
    expect(host.querySelector('.anb-undo')).toBeNull();
  });

  it.each([
    ['code after the id', 'x; import os'],
    ['a second line', '4282f6f634d0\nimport os'],
    ['a space', '4282f6f634d0 --all'],
    ['a missing id', ''],
    ['an id longer than 64 characters', 'a'.repeat(65)]
  ])('not a run whose id has %s', async (_, runId) => {
    for (const payload of [
      fixture('every_tool_session'),
      legacy(fixture('every_tool_session'))
    ]) {
      const { host, undo } = await render(
        withRunId(payload, runId),
        new FakeRunner()
      );
      expect(undo).toBeNull();
      expect(host.querySelector('.anb-undo')).toBeNull();
    }
  });

  it('checks run ids against the same pattern it builds code from', () => {
    expect(isValidRunId('4282f6f634d0')).toBe(true);
    expect(isValidRunId('run_2-b')).toBe(true);
    expect(isValidRunId('x; import os')).toBe(false);
    expect(isValidRunId(12)).toBe(false);
    expect(() => undoCode({ kind: 'undo', runId: 'x; import os' })).toThrow(
      /Refusing/
    );
  });
});

describe('the code each action sends', () => {
  it('undo, rewind and revert, each after %load_ext', () => {
    expect(undoCode({ kind: 'undo', runId: 'abc' })).toBe(
      '%load_ext architect_nb\n%architect undo abc'
    );
    expect(undoCode({ kind: 'rewind', runId: 'abc', step: 3 })).toBe(
      '%load_ext architect_nb\n%architect undo abc:3'
    );
    expect(
      undoCode({ kind: 'revert', runId: 'abc', path: 'shop/cart.py' })
    ).toBe(
      '%load_ext architect_nb\n%architect revert abc b64:c2hvcC9jYXJ0LnB5'
    );
  });

  it.each([
    ['a fractional step', 2.5],
    ['step 0', 0],
    ['a negative step', -1],
    ['a step too large', 10_000_000],
    ['NaN', Number.NaN]
  ])('refuses %s', (_, step) => {
    expect(() => undoCode({ kind: 'rewind', runId: 'abc', step })).toThrow(
      /Refusing/
    );
  });

  it.each([
    ['an empty path', ''],
    ['a NUL', 'a\0b'],
    ['a huge path', 'a'.repeat(4097)],
    ['a lone surrogate', 'a\uDC80b']
  ])('refuses %s', (_, path) => {
    expect(() => undoCode({ kind: 'revert', runId: 'abc', path })).toThrow(
      /Refusing/
    );
  });

  it.each([
    'shop/cart.py',
    'a',
    'ab',
    'abc',
    'with space/and\nnewline.txt',
    'quote\'"`$(rm -rf ~)`.py',
    'ünïcödé/日本語/🎉.md',
    '\u2028line separator',
    '~+/=?'
  ])('sends %j as URL-safe base64 of its UTF-8, unpadded', path => {
    const encoded = base64url(path);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]*$/);
    expect(encoded).toBe(Buffer.from(path, 'utf-8').toString('base64url'));
    expect(Buffer.from(encoded, 'base64url').toString('utf-8')).toBe(path);
  });

  it('types paths the way the magic splits its line', () => {
    expect(typedPath('shop/cart.py')).toBe('shop/cart.py');
    expect(typedPath('my file.py')).toBe("'my file.py'");
    expect(typedPath("it's.py")).toBe(`'it'"'"'s.py'`);
    expect(typedPath('two\nlines')).toBe(
      `b64:${Buffer.from('two\nlines').toString('base64url')}`
    );
    // As the Python renderer types them (tests/unit/notebook/test_notebook_approval.py): invisible characters go as base64.
    expect(typedPath('evil\u202etxt.py')).toBe('b64:ZXZpbOKArnR4dC5weQ');
    expect(typedPath('zero\u200bwidth')).toBe('b64:emVyb-KAi3dpZHRo');
    expect(visiblePath('evil\u202etxt.py\n')).toBe('evil\\u202etxt.py\\x0a');
    expect(typedMagic({ kind: 'rewind', runId: 'abc', step: 2 })).toBe(
      '%architect undo abc:2'
    );
    expect(typedMagic({ kind: 'revert', runId: 'abc', path: 'a b' })).toBe(
      "%architect revert abc 'a b'"
    );
  });
});

describe('the button', () => {
  // Each `make labextension-test` writes fresh fixtures, with new run ids.
  const runId = fixture('every_tool_session').run_id;
  const old = (): IRunPayload => legacy(fixture('every_tool_session'));

  it('without a kernel is disabled and says which magic to run', async () => {
    const { host } = await render(old(), null);
    const undo = button(host);
    expect(undo.disabled).toBe(true);
    expect(undo.title).toContain(`%architect undo ${runId}`);
    expect(host.querySelector<HTMLElement>('.anb-undo')?.title).toBe(
      undo.title
    );
  });

  it('outside a notebook is disabled too, and comes alive once in one', async () => {
    const runner = new FakeRunner();
    runner.inNotebook = false;
    const { host, undo } = await render(old(), runner);
    expect(button(host).disabled).toBe(true);
    expect(button(host).title).toContain(`%architect undo ${runId}`);
    runner.inNotebook = true;
    undo?.update();
    expect(button(host).disabled).toBe(false);
    expect(host.querySelector<HTMLElement>('.anb-undo')?.title).toBe('');
  });

  it('runs the undo of this run, shows progress, then "Undone" and the report', async () => {
    const runner = new FakeRunner();
    const { host } = await render(old(), runner);
    button(host).click();
    expect(runner.calls).toHaveLength(1);
    expect(runner.calls[0].action).toEqual({ kind: 'undo', runId });
    expect(host.contains(runner.calls[0].node)).toBe(true);
    expect(button(host).disabled).toBe(true);
    expect(button(host).textContent).toBe('Undoing…');
    button(host).click(); // a second click while busy sends nothing
    expect(runner.calls).toHaveLength(1);

    const report = `Undo of run ${runId}: restored 1 file(s).`;
    await runner.answer({ ok: true, message: report });
    expect(host.querySelector('.anb-undo-button')).toBeNull();
    const done = host.querySelector('.anb-summary .anb-undo-done');
    expect(done?.textContent).toBe(`Undone ${report}`);
  });

  it('shows a failure as an error and can be clicked again', async () => {
    const runner = new FakeRunner();
    const { host } = await render(old(), runner);
    button(host).click();
    await runner.answer({
      ok: false,
      message: `Run ${runId} was already undone.`
    });
    const undo = button(host);
    expect(undo.disabled).toBe(false);
    expect(undo.textContent).toBe('Undo this run');
    const error = host.querySelector<HTMLElement>('.anb-undo-error');
    expect(error?.hidden).toBe(false);
    expect(error?.textContent).toBe(`Run ${runId} was already undone.`);
    expect(error?.getAttribute('role')).toBe('alert');

    undo.click();
    expect(error?.hidden).toBe(true);
    expect(runner.calls).toHaveLength(2);
  });

  it('treats a runner that throws as a failure', async () => {
    const runner: IUndoRunner = {
      canRun: () => true,
      run: () => Promise.reject(new Error('boom'))
    };
    const { host } = await render(old(), runner);
    button(host).click();
    await new Promise(done => setTimeout(done, 0));
    expect(host.querySelector('.anb-undo-error')?.textContent).toBe(
      'Error: boom'
    );
    expect(button(host).disabled).toBe(false);
  });
});

type IOPubMessage = KernelMessage.IIOPubMessage;

/** A kernel that answers one execute request with the given IOPub messages and reply. */
function fakeKernel(
  iopub: Array<{ msg_type: string; content: unknown }>,
  reply: { status: string; ename?: string; evalue?: string } | Error = {
    status: 'ok'
  }
): { kernel: Kernel.IKernelConnection; requests: unknown[] } {
  const requests: unknown[] = [];
  const kernel = {
    requestExecute: (content: unknown) => {
      requests.push(content);
      const future = {
        onIOPub: (_: IOPubMessage) => undefined as void,
        done: Promise.resolve().then(() => {
          for (const msg of iopub) {
            future.onIOPub({
              header: { msg_type: msg.msg_type },
              content: msg.content
            } as unknown as IOPubMessage);
          }
          if (reply instanceof Error) {
            throw reply;
          }
          return { content: reply };
        })
      };
      return future;
    }
  };
  return {
    kernel: kernel as unknown as Kernel.IKernelConnection,
    requests
  };
}

function executeResult(text: string, level: string) {
  return {
    msg_type: 'execute_result',
    content: {
      data: { 'text/plain': text },
      metadata: { architect_nb: { level } },
      execution_count: null
    }
  };
}

const undoOf = (runId: string): UndoAction => ({ kind: 'undo', runId });

describe('executeUndo', () => {
  it('sends exactly the two magic lines, without history or input', async () => {
    const { kernel, requests } = fakeKernel([
      executeResult('Undo of run 3f2a9c0d1e4b: restored 2 file(s).', 'info')
    ]);
    await executeUndo(kernel, undoOf('3f2a9c0d1e4b'));
    expect(requests).toEqual([
      {
        code: '%load_ext architect_nb\n%architect undo 3f2a9c0d1e4b',
        silent: false,
        store_history: false,
        stop_on_error: false,
        allow_stdin: false
      }
    ]);
  });

  it('reads the report and the level from the execute_result, ignoring stream output', async () => {
    const { kernel } = fakeKernel([
      {
        msg_type: 'stream',
        content: {
          name: 'stdout',
          text: 'The architect_nb extension is already loaded.'
        }
      },
      executeResult('Undo of run 3f2a9c0d1e4b: restored 2 file(s).', 'info')
    ]);
    expect(await executeUndo(kernel, undoOf('3f2a9c0d1e4b'))).toEqual({
      ok: true,
      message: 'Undo of run 3f2a9c0d1e4b: restored 2 file(s).'
    });
  });

  it('reports the kernel saying no', async () => {
    const { kernel } = fakeKernel([
      executeResult('Unknown run 3f2a9c0d1e4b.', 'error')
    ]);
    expect(await executeUndo(kernel, undoOf('3f2a9c0d1e4b'))).toEqual({
      ok: false,
      message: 'Unknown run 3f2a9c0d1e4b.'
    });
  });

  it('reports an exception in the kernel as "ename: evalue"', async () => {
    const { kernel } = fakeKernel(
      [
        {
          msg_type: 'error',
          content: {
            ename: 'ModuleNotFoundError',
            evalue: "No module named 'architect_nb'",
            traceback: []
          }
        }
      ],
      {
        status: 'error',
        ename: 'ModuleNotFoundError',
        evalue: "No module named 'architect_nb'"
      }
    );
    expect(await executeUndo(kernel, undoOf('3f2a9c0d1e4b'))).toEqual({
      ok: false,
      message: "ModuleNotFoundError: No module named 'architect_nb'"
    });
  });

  it('reports an error reply without an error message', async () => {
    const { kernel } = fakeKernel([], {
      status: 'error',
      ename: 'UsageError',
      evalue: 'Unknown subcommand'
    });
    expect(await executeUndo(kernel, undoOf('abc'))).toEqual({
      ok: false,
      message: 'UsageError: Unknown subcommand'
    });
  });

  it('reports a kernel that went away, and one that said nothing', async () => {
    const gone = fakeKernel([], new Error('Kernel is dead'));
    const lost = await executeUndo(gone.kernel, undoOf('abc'));
    expect(lost.ok).toBe(false);
    expect(lost.message).toContain('Kernel is dead');

    const silent = fakeKernel([]);
    const quiet = await executeUndo(silent.kernel, undoOf('abc'));
    expect(quiet.ok).toBe(false);
    expect(quiet.message).toContain('%architect undo abc');
  });

  it('sends a revert with the path in base64, and reads its report', async () => {
    const { kernel, requests } = fakeKernel([
      executeResult('Undo of run abc (a b.py): restored 1 file(s).', 'info')
    ]);
    const result = await executeUndo(kernel, {
      kind: 'revert',
      runId: 'abc',
      path: 'a b.py'
    });
    expect(result).toEqual({
      ok: true,
      message: 'Undo of run abc (a b.py): restored 1 file(s).'
    });
    expect((requests[0] as { code: string }).code).toBe(
      `%load_ext architect_nb\n%architect revert abc b64:${Buffer.from('a b.py').toString('base64url')}`
    );
  });

  it('says which magic to type when the kernel says nothing about a rewind', async () => {
    const silent = fakeKernel([]);
    const quiet = await executeUndo(silent.kernel, {
      kind: 'rewind',
      runId: 'abc',
      step: 2
    });
    expect(quiet.ok).toBe(false);
    expect(quiet.message).toContain('%architect undo abc:2');
  });

  it('sends nothing for an unsafe run id', async () => {
    const { kernel, requests } = fakeKernel([]);
    const result = await executeUndo(kernel, undoOf('x; import os'));
    expect(result.ok).toBe(false);
    expect(requests).toEqual([]);
  });
});

describe('notebookUndoRunner', () => {
  function tracker(
    panels: Array<{
      node: HTMLElement;
      kernel: Kernel.IKernelConnection | null;
    }>
  ): INotebookTracker {
    const fakes = panels.map(({ node, kernel }) => ({
      node,
      sessionContext: { session: kernel === null ? null : { kernel } }
    }));
    return {
      find: (test: (panel: NotebookPanel) => boolean) =>
        fakes.find(panel => test(panel as unknown as NotebookPanel))
    } as unknown as INotebookTracker;
  }

  it('runs the undo in the kernel of the notebook that holds the output', async () => {
    const mine = document.createElement('div');
    const other = document.createElement('div');
    const output = document.createElement('div');
    mine.append(output);
    const used = fakeKernel([executeResult('restored', 'info')]);
    const unused = fakeKernel([]);
    const runner = notebookUndoRunner(
      tracker([
        { node: other, kernel: unused.kernel },
        { node: mine, kernel: used.kernel }
      ])
    );
    expect(runner.canRun(output)).toBe(true);
    expect(runner.canRun(document.createElement('div'))).toBe(false);
    expect(await runner.run(undoOf('abc'), output)).toEqual({
      ok: true,
      message: 'restored'
    });
    expect(used.requests).toHaveLength(1);
    expect(unused.requests).toHaveLength(0);
  });

  it('says what to do when the notebook has no kernel', async () => {
    const panel = document.createElement('div');
    const output = document.createElement('div');
    panel.append(output);
    const runner = notebookUndoRunner(tracker([{ node: panel, kernel: null }]));
    const result = await runner.run(undoOf('abc'), output);
    expect(result.ok).toBe(false);
    expect(result.message).toContain('%architect undo abc');
  });
});
