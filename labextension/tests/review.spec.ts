/**
 * The review list (Keep, Revert, Revert all) and the steps' rewinds, on a real
 * run that changed files with an edit, a command and a new file across steps.
 */

import { renderRun } from '../src/timeline';
import type { RunControls } from '../src/review';
import { OPEN_DIFFS } from '../src/review';
import type { IRunPayload } from '../src/types';
import { IUndoResult, IUndoRunner, undoCode } from '../src/undo';
import {
  buttonIn,
  FakeRunner,
  finishedOf,
  fixture,
  row,
  step,
  texts,
  withChanges
} from './helpers';

const ok = (message: string): IUndoResult => ({ ok: true, message });
const no = (message: string): IUndoResult => ({ ok: false, message });

async function render(
  payload: IRunPayload,
  runner: IUndoRunner | null
): Promise<{ host: HTMLElement; controls: RunControls | null }> {
  const host = document.createElement('div');
  document.body.replaceChildren(host);
  const controls = await renderRun(payload, host, {}, runner);
  return { host, controls };
}

const CART = 'shop/cart.py';
const NOTES = 'CHANGES.md';
const TEST = 'tests/test_cart.py';
const ROUNDING = 'shop/rounding.py';

describe('the review fixture, as the kernel wrote it', () => {
  it('says which call changed which file, and lists every change with its status and diff', () => {
    const payload = fixture('review');
    const results = payload.events.filter(e => e.kind === 'tool_result');
    expect(
      results.map(r => (r.kind === 'tool_result' ? r.changed_files : []))
    ).toEqual([[CART], [NOTES, CART, TEST], [ROUNDING]]);
    const changes = finishedOf(payload).changes;
    expect(changes.map(c => [c.path, c.status])).toEqual([
      [CART, 'modified'],
      [NOTES, 'added'],
      [TEST, 'deleted'],
      [ROUNDING, 'added']
    ]);
    const cart = changes[0].diff;
    expect(cart).toContain('+        total = 0.0');
    expect(cart).toContain('percent: float = 0.0');
    expect(finishedOf(payload).undo_note).toBe('');
  });
});

describe('steps that changed files', () => {
  it('list their files and offer a rewind to before the step', async () => {
    const { host } = await render(fixture('review'), new FakeRunner());
    expect(texts(step(host, 1), '.anb-step-files code')).toEqual([CART]);
    expect(texts(step(host, 2), '.anb-step-files code')).toEqual([
      NOTES,
      CART,
      TEST
    ]);
    expect(
      step(host, 2).querySelector('summary .anb-step-changed')?.textContent
    ).toBe('3 files changed');
    expect(texts(step(host, 3), '.anb-step-files code')).toEqual([ROUNDING]);
    expect(step(host, 4).querySelector('.anb-step-files')).toBeNull();
    for (const n of [1, 2, 3]) {
      expect(
        buttonIn(step(host, n), 'Rewind to before this step').disabled
      ).toBe(false);
    }
  });

  it('rewind runs `undo RUN:STEP`, then marks later steps and the files only they changed', async () => {
    const payload = fixture('review');
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    const rewind = buttonIn(step(host, 2), 'Rewind to before this step');
    rewind.click();
    expect(runner.actions).toEqual([
      { kind: 'rewind', runId: payload.run_id, step: 2 }
    ]);
    expect(rewind.textContent).toBe('Rewinding…');
    expect(rewind.disabled).toBe(true);
    const report = `Undo of run ${payload.run_id} (from step 2): restored 2 file(s), removed 2 created file(s).`;
    await runner.answer(ok(report));

    expect(step(host, 2).querySelector('.anb-undo-done')?.textContent).toBe(
      `Rewound ${report}`
    );
    expect(step(host, 3).querySelector('.anb-undo-done')?.textContent).toBe(
      'Rewound With the rewind to before step 2.'
    );
    expect(buttonIn(step(host, 1), 'Rewind to before this step').disabled).toBe(
      false
    );
    // Only step 2 and later changed these: they are back as before the run.
    for (const path of [NOTES, TEST, ROUNDING]) {
      expect(row(host, path).dataset.state).toBe('reverted');
    }
    // Step 1 changed cart.py too, so it is not.
    expect(row(host, CART).dataset.state).toBe('open');
    expect(row(host, CART).querySelector('.anb-review-note')?.textContent).toBe(
      "Partly rewound: its changes from step 2 on are undone; the diff is still the whole run's."
    );
    // Revert all then reverts the one file left, by itself.
    buttonIn(
      host.querySelector('.anb-review-title') as HTMLElement,
      'Revert all'
    ).click();
    expect(runner.actions[1]).toEqual({
      kind: 'revert',
      runId: payload.run_id,
      path: CART
    });
  });

  it("a refused rewind shows the kernel's message and can be tried again", async () => {
    const runner = new FakeRunner();
    const { host } = await render(fixture('review'), runner);
    const rewind = buttonIn(step(host, 3), 'Rewind to before this step');
    rewind.click();
    const refusal = 'run 4f was already rewound to before step 2.';
    await runner.answer(no(refusal));
    const error = step(host, 3).querySelector<HTMLElement>('.anb-undo-error');
    expect(error?.hidden).toBe(false);
    expect(error?.textContent).toBe(refusal);
    expect(error?.getAttribute('role')).toBe('alert');
    expect(rewind.disabled).toBe(false);
    expect(rewind.textContent).toBe('Rewind to before this step');
    expect(row(host, ROUNDING).dataset.state).toBe('open');
  });
});

describe('the review list', () => {
  it('shows every changed file with its status badge and its diff, and no separate file list', async () => {
    const { host } = await render(fixture('review'), new FakeRunner());
    const summary = host.querySelector('.anb-summary') as HTMLElement;
    expect(summary.querySelector('.anb-files')).toBeNull();
    expect(summary.querySelector('.anb-review-title')?.textContent).toContain(
      'Review: 4 files changed'
    );
    expect(texts(summary, '.anb-review-path')).toEqual([
      CART,
      NOTES,
      TEST,
      ROUNDING
    ]);
    expect(texts(summary, '.anb-review-head > .anb-badge:first-child')).toEqual(
      ['modified', 'added', 'deleted', 'added']
    );
    const cart = row(host, CART);
    expect(
      cart.querySelector<HTMLDetailsElement>('.anb-review-diff')?.open
    ).toBe(true);
    expect(texts(cart, '.anb-diff tr.anb-line-add .anb-code')).toContain(
      '        total = 0.0'
    );
    expect(
      texts(row(host, TEST), '.anb-diff tr.anb-line-del .anb-code')
    ).toContain('from shop.cart import Cart, Item');
    expect(
      texts(row(host, NOTES), '.anb-diff tr.anb-line-add .anb-code')
    ).toEqual(['Totals are floats.']);
  });

  it('Keep marks the row and sends nothing; pressed again it unmarks it', async () => {
    const runner = new FakeRunner();
    const { host } = await render(fixture('review'), runner);
    const keep = buttonIn(row(host, CART), 'Keep');
    keep.click();
    expect(runner.actions).toEqual([]);
    expect(row(host, CART).dataset.state).toBe('kept');
    expect(keep.getAttribute('aria-pressed')).toBe('true');
    expect(
      row(host, CART).querySelector('.anb-review-state')?.textContent
    ).toBe('kept');
    keep.click();
    expect(row(host, CART).dataset.state).toBe('open');
    expect(keep.getAttribute('aria-pressed')).toBe('false');
  });

  it("Revert reverts that file only, and shows the kernel's report", async () => {
    const payload = fixture('review');
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    const revert = buttonIn(row(host, TEST), 'Revert');
    revert.click();
    expect(runner.actions).toEqual([
      { kind: 'revert', runId: payload.run_id, path: TEST }
    ]);
    expect(revert.textContent).toBe('Reverting…');
    const report = `Undo of run ${payload.run_id} (${TEST}): restored 1 file(s).`;
    await runner.answer(ok(report));
    expect(row(host, TEST).dataset.state).toBe('reverted');
    expect(row(host, TEST).querySelector('.anb-undo-done')?.textContent).toBe(
      `Reverted ${report}`
    );
    expect(buttonIn(row(host, TEST), 'Keep').hidden).toBe(true);
    // Its diff folds away: what is left to review is the rest.
    expect(
      row(host, TEST).querySelector<HTMLDetailsElement>('.anb-review-diff')
        ?.open
    ).toBe(false);
    expect(
      row(host, CART).querySelector<HTMLDetailsElement>('.anb-review-diff')
        ?.open
    ).toBe(true);
    for (const path of [CART, NOTES, ROUNDING]) {
      expect(row(host, path).dataset.state).toBe('open');
    }
  });

  it('a conflict is shown on the row, which stays open', async () => {
    const runner = new FakeRunner();
    const { host } = await render(fixture('review'), runner);
    buttonIn(row(host, CART), 'Revert').click();
    const conflict =
      'Undo of run 4f (shop/cart.py): restored 0 file(s). Left alone, because they changed since the run: shop/cart.py.';
    await runner.answer(no(conflict));
    expect(row(host, CART).dataset.state).toBe('open');
    expect(row(host, CART).querySelector('.anb-undo-error')?.textContent).toBe(
      conflict
    );
    expect(buttonIn(row(host, CART), 'Revert').disabled).toBe(false);
  });

  it('Revert all with nothing kept or reverted is the undo of the run', async () => {
    const payload = fixture('review');
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    const all = buttonIn(
      host.querySelector('.anb-review-title') as HTMLElement,
      'Revert all'
    );
    all.click();
    expect(runner.actions).toEqual([{ kind: 'undo', runId: payload.run_id }]);
    expect(all.textContent).toBe('Reverting…');
    // Nothing else can be clicked meanwhile.
    expect(buttonIn(row(host, CART), 'Keep').disabled).toBe(true);
    expect(buttonIn(row(host, CART), 'Revert').disabled).toBe(true);
    const report = `Undo of run ${payload.run_id}: restored 2 file(s), removed 2 created file(s).`;
    await runner.answer(ok(report));
    expect(
      host.querySelector('.anb-review-title .anb-undo-done')?.textContent
    ).toBe(`Reverted ${report}`);
    for (const path of [CART, NOTES, TEST, ROUNDING]) {
      expect(row(host, path).dataset.state).toBe('reverted');
    }
    // Nothing is left to rewind.
    const rewind = buttonIn(step(host, 1), 'Rewind to before this step');
    expect(rewind.disabled).toBe(true);
    expect(rewind.title).toContain('was undone');
    expect(runner.actions).toHaveLength(1);
  });

  it('Revert all after a Keep reverts each file not kept, one by one, and says what it did', async () => {
    const payload = fixture('review');
    const runner = new FakeRunner();
    const { host } = await render(payload, runner);
    buttonIn(row(host, NOTES), 'Keep').click();
    buttonIn(
      host.querySelector('.anb-review-title') as HTMLElement,
      'Revert all'
    ).click();
    await runner.answer(ok('restored cart'));
    await runner.answer(no('tests/test_cart.py changed since the run'));
    await runner.answer(ok('removed rounding'));
    expect(runner.actions).toEqual(
      [CART, TEST, ROUNDING].map(path => ({
        kind: 'revert',
        runId: payload.run_id,
        path
      }))
    );
    expect(row(host, CART).dataset.state).toBe('reverted');
    expect(row(host, NOTES).dataset.state).toBe('kept');
    expect(row(host, TEST).dataset.state).toBe('open');
    expect(row(host, TEST).querySelector('.anb-undo-error')?.textContent).toBe(
      'tests/test_cart.py changed since the run'
    );
    expect(row(host, ROUNDING).dataset.state).toBe('reverted');
    const title = host.querySelector('.anb-review-title') as HTMLElement;
    expect(title.querySelector('.anb-undo-error')?.textContent).toBe(
      'Reverted 2 of 3 file(s); kept 1. 1 could not be reverted: see the message on its row.'
    );
    // The row that failed can be reverted again, by itself or by Revert all.
    expect(buttonIn(row(host, TEST), 'Revert').disabled).toBe(false);
    expect(buttonIn(title, 'Revert all').disabled).toBe(false);
    expect(buttonIn(row(host, NOTES), 'Keep').disabled).toBe(false);
  });

  it('Revert all has nothing to do once every file is kept or reverted', async () => {
    const runner = new FakeRunner();
    const { host } = await render(fixture('review'), runner);
    for (const path of [CART, NOTES, TEST, ROUNDING]) {
      buttonIn(row(host, path), 'Keep').click();
    }
    const all = buttonIn(
      host.querySelector('.anb-review-title') as HTMLElement,
      'Revert all'
    );
    expect(all.disabled).toBe(true);
    expect(all.title).toContain('Nothing left to revert');
    buttonIn(row(host, CART), 'Keep').click();
    expect(all.disabled).toBe(false);
  });

  it('without a kernel, every kernel button is off and says which magic to type; Keep still marks', async () => {
    const payload = fixture('review');
    const { host, controls } = await render(payload, null);
    expect(controls).not.toBeNull();
    const id = payload.run_id;
    const title = host.querySelector('.anb-review-title') as HTMLElement;
    expect(buttonIn(title, 'Revert all').disabled).toBe(true);
    expect(buttonIn(title, 'Revert all').title).toContain(
      `%architect undo ${id}`
    );
    expect(buttonIn(row(host, CART), 'Revert').title).toContain(
      `%architect revert ${id} shop/cart.py`
    );
    const rewind = buttonIn(step(host, 2), 'Rewind to before this step');
    expect(rewind.disabled).toBe(true);
    expect(rewind.title).toContain(`%architect undo ${id}:2`);
    buttonIn(row(host, CART), 'Keep').click();
    expect(row(host, CART).dataset.state).toBe('kept');
  });

  it('comes alive once the output is in a notebook', async () => {
    const runner = new FakeRunner();
    runner.inNotebook = false;
    const { host, controls } = await render(fixture('review'), runner);
    expect(buttonIn(row(host, CART), 'Revert').disabled).toBe(true);
    runner.inNotebook = true;
    controls?.update();
    expect(buttonIn(row(host, CART), 'Revert').disabled).toBe(false);
    expect(buttonIn(step(host, 1), 'Rewind to before this step').disabled).toBe(
      false
    );
  });
});

describe('hostile and unusual review lists', () => {
  const diff = '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n';

  it('a path never reaches kernel code as text, only as base64', async () => {
    const payload = fixture('review');
    const path = "x'; import os; os.system('rm -rf ~') #.py";
    const runner = new FakeRunner();
    const { host } = await render(
      withChanges(payload, [{ path, status: 'modified', diff }]),
      runner
    );
    // The hint a person reads quotes it the way the magic splits its line.
    expect(buttonIn(row(host, path), 'Revert').title).toContain(
      `'x'"'"'; import os; os.system('"'"'rm -rf ~'"'"') #.py'`
    );
    buttonIn(row(host, path), 'Revert').click();
    const action = runner.actions[0];
    expect(action).toEqual({ kind: 'revert', runId: payload.run_id, path });
    const code = undoCode(action);
    expect(code).not.toContain('import os');
    expect(code).toMatch(
      new RegExp(
        `^%load_ext architect_nb\\n%architect revert ${payload.run_id} b64:[A-Za-z0-9_-]+$`
      )
    );
  });

  it('a name that hides characters is shown with them escaped', async () => {
    const path = 'invoice\u202egpj.exe';
    const { host } = await render(
      withChanges(fixture('review'), [{ path, status: 'added', diff }]),
      new FakeRunner()
    );
    expect(row(host, path).querySelector('.anb-review-path')?.textContent).toBe(
      'invoice\\u202egpj.exe'
    );
    expect(buttonIn(row(host, path), 'Revert').title).toContain(
      `%architect revert ${fixture('review').run_id} b64:`
    );
  });

  it('a path that cannot be sent gets a read-only row', async () => {
    const paths = ['nul\0byte', 'x'.repeat(5000), 'lone\uD800surrogate'];
    const { host } = await render(
      withChanges(
        fixture('review'),
        paths.map(path => ({ path, status: 'added', diff }))
      ),
      new FakeRunner()
    );
    for (const path of paths) {
      expect(row(host, path).querySelectorAll('.anb-undo-button')).toHaveLength(
        0
      );
    }
  });

  it('Revert all says which files it could not send, rather than skip them quietly', async () => {
    const payload = fixture('review');
    const runner = new FakeRunner();
    const { host } = await render(
      withChanges(payload, [
        { path: 'ok.py', status: 'added', diff },
        { path: 'kept.py', status: 'added', diff },
        { path: 'nul\0byte', status: 'added', diff }
      ]),
      runner
    );
    buttonIn(row(host, 'kept.py'), 'Keep').click();
    const title = host.querySelector('.anb-review-title') as HTMLElement;
    buttonIn(title, 'Revert all').click();
    await runner.answer(ok('removed ok.py'));
    expect(runner.actions).toEqual([
      { kind: 'revert', runId: payload.run_id, path: 'ok.py' }
    ]);
    expect(title.querySelector('.anb-undo-error')?.textContent).toBe(
      'Reverted 1 of 1 file(s); kept 1. Not sent, since such a name cannot be: nul\\x00byte; %architect undo reverts them with the run.'
    );
  });

  it('a run id that is not safe gets the list with no button at all', async () => {
    const payload = { ...fixture('review'), run_id: 'x; import os' };
    const { host, controls } = await render(payload, new FakeRunner());
    expect(controls).toBeNull();
    expect(host.querySelectorAll('.anb-review-row')).toHaveLength(4);
    expect(
      host.querySelectorAll('.anb-summary button.anb-undo-button')
    ).toHaveLength(0);
    expect(host.querySelectorAll('.anb-rewind-button')).toHaveLength(0);
    expect(texts(step(host, 2), '.anb-step-files code')).toHaveLength(3);
  });

  it('many files: diffs start folded and are drawn when opened; unlisted files are counted', async () => {
    const changes = Array.from({ length: OPEN_DIFFS + 1 }, (_, i) => ({
      path: `gen/f${i}.py`,
      status: 'added' as const,
      diff
    }));
    const files = [...changes.map(c => c.path), 'gen/more1.py', 'gen/more2.py'];
    const payload = fixture('review');
    const { host } = await render(
      withChanges(payload, changes, files),
      new FakeRunner()
    );
    const first = row(host, 'gen/f0.py');
    const details = first.querySelector<HTMLDetailsElement>('.anb-review-diff');
    expect(details?.open).toBe(false);
    expect(first.querySelector('.anb-diff')).toBeNull();
    if (details) {
      details.open = true;
      details.dispatchEvent(new Event('toggle'));
    }
    expect(first.querySelector('.anb-diff')).not.toBeNull();
    expect(host.querySelector('.anb-review-title')?.textContent).toContain(
      `Review: ${OPEN_DIFFS + 3} files changed`
    );
    expect(host.querySelector('.anb-review-more')?.textContent).toBe(
      `2 more file(s) are not listed here: %architect review ${payload.run_id} lists them all.`
    );
  });

  it('drops review entries with no path or an unknown status, and says when a file has no text diff', async () => {
    const raw = JSON.parse(JSON.stringify(fixture('review'))) as IRunPayload;
    const finished = raw.events[raw.events.length - 1] as unknown as Record<
      string,
      unknown
    >;
    finished.changes = [
      { path: '', status: 'added', diff },
      { path: 'a.bin', status: 'exploded', diff },
      { path: 'img.png', status: 'modified', diff: '' },
      'not an object'
    ];
    const { parsePayload } = await import('../src/types');
    const { host } = await render(parsePayload(raw), new FakeRunner());
    expect(texts(host, '.anb-review-path')).toEqual(['img.png']);
    expect(row(host, 'img.png').textContent).toContain('No text diff');
  });
});
