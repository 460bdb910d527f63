/**
 * The person's variables that code run in the kernel changed (`changed_state`
 * on run_python's results, `/kernel` in the review), on a real run: step 1
 * mutates a DataFrame and adds a list, step 2 writes a file, step 3 adds and
 * deletes names and advances a generator undo cannot copy.
 */

import { buildRunView, stepsByFile } from '../src/model';
import type { RunControls } from '../src/review';
import { renderRun } from '../src/timeline';
import { describeVariable } from '../src/timeline';
import type { IRunPayload, IToolResult } from '../src/types';
import { KERNEL_ENTRY, parsePayload } from '../src/types';
import { IUndoResult, IUndoRunner, typedMagic, undoCode } from '../src/undo';
import {
  buttonIn,
  FakeRunner,
  finishedOf,
  fixture,
  rawFixture,
  row,
  step,
  texts,
  withChanges
} from './helpers';

const ok = (message: string): IUndoResult => ({ ok: true, message });

const NOTES = 'NOTES.md';
const DF =
  'df mutated (DataFrame 3×2 [a:int64, b:float64] → DataFrame 3×3 [a:int64, b:float64, c:int64])';
const ITEMS = 'items added (list, len 3)';
const ROWS =
  'rows mutated (generator → may have changed) (not undoable: a generator cannot be copied)';

function results(payload: IRunPayload): IToolResult[] {
  return payload.events.filter(
    (event): event is IToolResult => event.kind === 'tool_result'
  );
}

async function render(
  payload: IRunPayload,
  runner: IUndoRunner | null = new FakeRunner()
): Promise<{ host: HTMLElement; controls: RunControls | null }> {
  const host = document.createElement('div');
  document.body.replaceChildren(host);
  const controls = await renderRun(payload, host, {}, runner);
  return { host, controls };
}

/** A tool_result event of the fixture with `changed_state` replaced, parsed as the renderer would. */
function withState(changedState: unknown): IToolResult {
  const raw = JSON.parse(JSON.stringify(rawFixture('kernel_undo'))) as {
    events: Array<Record<string, unknown>>;
  };
  const result = raw.events.find(event => event.kind === 'tool_result');
  if (result === undefined) {
    throw new Error('the fixture has no tool result');
  }
  result.changed_state = changedState;
  raw.events = [result];
  return results(parsePayload({ ...raw, version: 1 }))[0];
}

describe('changed_state, as the kernel wrote it', () => {
  it('is read from each result: kind, before and after, and whether undo can restore it', () => {
    const [first, write, third] = results(fixture('kernel_undo'));
    expect(first.changed_state).toEqual([
      {
        name: 'df',
        kind: 'mutated',
        before: 'DataFrame 3×2 [a:int64, b:float64]',
        after: 'DataFrame 3×3 [a:int64, b:float64, c:int64]',
        restorable: true,
        why: ''
      },
      {
        name: 'items',
        kind: 'added',
        before: '',
        after: 'list, len 3',
        restorable: true,
        why: ''
      }
    ]);
    expect(write.changed_state).toEqual([]);
    expect(write.changed_files).toEqual([NOTES]);
    expect(
      third.changed_state.map(c => [c.name, c.kind, c.restorable])
    ).toEqual([
      ['first', 'added', true],
      ['label', 'deleted', true],
      ['rows', 'mutated', false]
    ]);
    expect(third.changed_state[2].why).toBe('a generator cannot be copied');
    const finished = finishedOf(fixture('kernel_undo'));
    expect(finished.files_changed).toEqual([NOTES]);
    expect(finished.changes.map(c => c.path)).toEqual([NOTES, KERNEL_ENTRY]);
  });

  it('drops malformed entries and keeps the good ones, never throwing', () => {
    const good = {
      name: 'x',
      kind: 'rebound',
      before: 'int',
      after: 'str',
      restorable: true,
      why: ''
    };
    const parsed = withState([
      good,
      { ...good, name: '' },
      { ...good, name: 5 },
      { ...good, kind: 'exploded' },
      { kind: 'added', after: 'list' },
      'df mutated',
      null,
      [good],
      // Odd fields read as the Python renderer reads them: text or '', restorable unless false.
      { name: 'y', kind: 'deleted', before: 42, restorable: 'no', why: null }
    ]);
    expect(parsed.changed_state).toEqual([
      good,
      {
        name: 'y',
        kind: 'deleted',
        before: '',
        after: '',
        restorable: true,
        why: ''
      }
    ]);
    for (const odd of ['df', 42, null, { df: 'mutated' }, undefined]) {
      expect(withState(odd).changed_state).toEqual([]);
    }
  });
});

describe('a call that changed variables', () => {
  it('says which under its card, as the Python renderer words them', async () => {
    const { host } = await render(fixture('kernel_undo'));
    const first = step(host, 1).querySelector('.anb-call-variables');
    expect(first?.textContent).toBe(`Your variables: ${DF}, ${ITEMS}`);
    expect(texts(first as Element, 'code')).toEqual([DF, ITEMS]);
    // Under the call's card, not in it: seen while the card is folded.
    const call = first?.previousElementSibling as HTMLDetailsElement;
    expect(call.matches('details.anb-call')).toBe(true);
    expect(call.open).toBe(false);
    expect(call.dataset.callId).toBe((first as HTMLElement).dataset.callId);
    expect(step(host, 2).querySelector('.anb-call-variables')).toBeNull();
    expect(
      texts(step(host, 3), '.anb-call-variables code[data-restorable="false"]')
    ).toEqual([ROWS]);
    expect(
      step(host, 3).querySelector('.anb-call-variables')?.textContent
    ).toBe(
      `Your variables: first added (0), label deleted ('before'), ${ROWS}`
    );
  });

  it('words a change without a reason, and hides no character in a name', async () => {
    const change = {
      name: 'x',
      kind: 'rebound' as const,
      before: 'int',
      after: 'str',
      restorable: false,
      why: ''
    };
    expect(describeVariable(change)).toBe(
      'x rebound (int → str) (not undoable)'
    );
    const result = withState([
      { ...change, name: 'a\u202eb', restorable: true }
    ]);
    const { host } = await render(
      { version: 1, run_id: 'r1', events: [result] },
      null
    );
    expect(host.querySelector('.anb-call-variables code')?.textContent).toBe(
      'a\\u202eb rebound (int → str)'
    );
  });
});

describe('a step that changed variables', () => {
  it('counts them in its header, beside the files', async () => {
    const { host } = await render(fixture('kernel_undo'));
    const header = (n: number): string[] =>
      texts(step(host, n), ':scope > summary .anb-step-changed');
    expect(header(1)).toEqual(['2 variables changed']);
    expect(header(2)).toEqual(['1 file changed']);
    expect(header(3)).toEqual(['3 variables changed']);
    expect(header(4)).toEqual([]);
    // The calls' lines name the variables; the step's section has the files (none here) and the rewind.
    const section = step(host, 1).querySelector('.anb-step-files');
    expect(section?.querySelector('ul, .anb-section-title')).toBeNull();
    expect(section?.querySelector('.anb-rewind-button')).not.toBeNull();
    expect(texts(step(host, 2), '.anb-step-files code')).toEqual([NOTES]);
    expect(step(host, 4).querySelector('.anb-step-files')).toBeNull();
  });

  it('while the run goes on, says what changed and offers no rewind yet', async () => {
    const payload = fixture('kernel_undo');
    const live = {
      ...payload,
      events: payload.events.filter(event => event.kind !== 'run_finished')
    };
    const { host } = await render(live);
    expect(
      step(host, 1).querySelector('.anb-call-variables')?.textContent
    ).toBe(`Your variables: ${DF}, ${ITEMS}`);
    expect(step(host, 1).querySelector('.anb-step-files')).toBeNull();
    expect(texts(step(host, 2), '.anb-step-files code')).toEqual([NOTES]);
  });

  it('offers "Rewind to before this step" on a step that changed only variables', async () => {
    const payload = fixture('kernel_undo');
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    for (const n of [1, 2, 3]) {
      expect(
        buttonIn(step(host, n), 'Rewind to before this step').disabled
      ).toBe(false);
    }
    const rewind = buttonIn(step(host, 1), 'Rewind to before this step');
    expect(rewind.title).toBe(
      `Put the workspace and your variables back as they were just before step 1 (runs %architect undo ${payload.run_id}:1 in the kernel)`
    );
    rewind.click();
    expect(runner.actions).toEqual([
      { kind: 'rewind', runId: payload.run_id, step: 1 }
    ]);
    await runner.answer(ok('Your variables restored: df, items.'));
    // Every change came at step 1 or later: the file and the variables are back.
    expect(row(host, NOTES).dataset.state).toBe('reverted');
    expect(row(host, KERNEL_ENTRY).dataset.state).toBe('reverted');
  });

  it('a rewind to a later step leaves the variables partly rewound', async () => {
    const payload = fixture('kernel_undo');
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    buttonIn(step(host, 3), 'Rewind to before this step').click();
    await runner.answer(ok('Removed the variables the run created: first.'));
    expect(row(host, NOTES).dataset.state).toBe('open');
    expect(row(host, KERNEL_ENTRY).dataset.state).toBe('open');
    expect(
      row(host, KERNEL_ENTRY).querySelector('.anb-review-note')?.textContent
    ).toBe(
      "Partly rewound: your variables' changes from step 3 on are undone; the list is still the whole run's."
    );
  });

  it('takes part in the steps by entry, as /kernel', () => {
    const steps = stepsByFile(buildRunView(fixture('kernel_undo').events));
    expect(Object.fromEntries(steps)).toEqual({
      [NOTES]: [2],
      [KERNEL_ENTRY]: [1, 3]
    });
  });
});

describe("the review's entry for the variables", () => {
  it('is named "Your variables (kernel)" and shows its lines as text, not as a diff', async () => {
    const { host } = await render(fixture('kernel_undo'));
    const summary = host.querySelector('.anb-summary') as HTMLElement;
    expect(summary.querySelector('.anb-review-title')?.textContent).toContain(
      'Review: 1 file and your variables changed'
    );
    expect(summary.querySelector('.anb-review-more')).toBeNull();
    expect(texts(summary, '.anb-review-path')).toEqual([
      NOTES,
      'Your variables (kernel)'
    ]);
    const kernel = row(host, KERNEL_ENTRY);
    expect(kernel.querySelector('.anb-diff')).toBeNull();
    expect(kernel.querySelector('summary')?.textContent).toBe(
      'What changed (7 lines)'
    );
    const text = kernel.querySelector('pre')?.textContent ?? '';
    expect(text.split('\n')[0]).toBe(
      'Step 1 (run_python). Your variables changed:'
    );
    expect(text).toContain('  items: added, list, len 3');
    expect(text).toContain(
      'rows: mutated, generator → may have changed (undo cannot restore it: a generator cannot be copied)'
    );
    // The file beside it is still a diff.
    expect(
      texts(row(host, NOTES), '.anb-diff tr.anb-line-add .anb-code')
    ).toEqual(['c = 2a']);
  });

  it('Revert sends the path as base64, as for a file', async () => {
    const payload = fixture('kernel_undo');
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    const revert = buttonIn(row(host, KERNEL_ENTRY), 'Revert');
    expect(revert.title).toBe(
      `Put your variables back as they were before the run (runs %architect revert ${payload.run_id} /kernel in the kernel)`
    );
    revert.click();
    const action = runner.actions[0];
    expect(action).toEqual({
      kind: 'revert',
      runId: payload.run_id,
      path: KERNEL_ENTRY
    });
    expect(undoCode(action)).toBe(
      `%load_ext architect_nb\n%architect revert ${payload.run_id} b64:L2tlcm5lbA`
    );
    expect(typedMagic(action)).toBe(
      `%architect revert ${payload.run_id} /kernel`
    );
    await runner.answer(ok('Your variables restored: df, items.'));
    expect(row(host, KERNEL_ENTRY).dataset.state).toBe('reverted');
    expect(row(host, NOTES).dataset.state).toBe('open');
  });

  it('without a kernel, the hint names the magic a person types', async () => {
    const payload = fixture('kernel_undo');
    const { host } = await render(payload, null);
    const revert = buttonIn(row(host, KERNEL_ENTRY), 'Revert');
    expect(revert.disabled).toBe(true);
    expect(revert.title).toContain(
      `%architect revert ${payload.run_id} /kernel`
    );
  });
});

describe('a run that changed only variables', () => {
  const onlyVariables = (payload: IRunPayload): IRunPayload =>
    withChanges(
      payload,
      finishedOf(payload).changes.filter(c => c.path === KERNEL_ENTRY),
      []
    );

  it('has a review of the variables alone, whose Revert all is the undo of the run', async () => {
    const payload = onlyVariables(fixture('kernel_undo'));
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    const title = host.querySelector('.anb-review-title') as HTMLElement;
    expect(title.textContent).toContain('Review: your variables changed');
    buttonIn(title, 'Revert all').click();
    expect(runner.actions).toEqual([{ kind: 'undo', runId: payload.run_id }]);
  });

  it('without a review list (an older kernel), still offers "Undo this run"', async () => {
    const payload = withChanges(fixture('kernel_undo'), [], []);
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    expect(host.querySelector('.anb-review')).toBeNull();
    buttonIn(
      host.querySelector('.anb-summary') as HTMLElement,
      'Undo this run'
    ).click();
    expect(runner.actions).toEqual([{ kind: 'undo', runId: payload.run_id }]);
  });
});
