import { renderRun } from '../src/timeline';
import { parsePayload } from '../src/types';
import type { IRunPayload } from '../src/types';
import { fixture, rawFixture, texts } from './helpers';

async function render(payload: IRunPayload): Promise<HTMLElement> {
  const host = document.createElement('div');
  document.body.replaceChildren(host);
  await renderRun(payload, host);
  return host;
}

function call(host: HTMLElement, tool: string, index = 0): HTMLDetailsElement {
  const cards = Array.from(
    host.querySelectorAll<HTMLDetailsElement>('details.anb-call')
  ).filter(card => card.querySelector('.anb-tool')?.textContent === tool);
  if (!cards[index]) {
    throw new Error(`no card for ${tool} #${index}`);
  }
  return cards[index];
}

describe('renderRun', () => {
  it('renders the whole job: header, a card per step and call, diffs and the summary', async () => {
    const payload = fixture('every_tool_session');
    const host = await render(payload);
    const finished = payload.events[payload.events.length - 1];
    const total = finished.kind === 'run_finished' ? finished.total_tokens : -1;
    expect(host.querySelector('.anb-task')?.textContent).toBe(
      'Make totals floats and round discounts to cents; keep the tests green.'
    );
    expect(host.querySelector('.anb-run-meta')?.textContent).toContain(
      'confirm-sensitive'
    );
    expect(host.querySelectorAll('details.anb-step')).toHaveLength(6);
    expect(host.querySelectorAll('details.anb-call')).toHaveLength(5);

    const read = call(host, 'read_file');
    expect(read.dataset.status).toBe('ran');
    expect(read.open).toBe(false);
    expect(read.querySelector('.anb-call-arg')?.textContent).toBe(
      'shop/cart.py'
    );

    const edit = call(host, 'edit_file');
    expect(edit.dataset.status).toBe('approved');
    expect(edit.open).toBe(true);
    expect(edit.querySelector('.anb-confirmation')?.textContent).toContain(
      'Asked for confirmation (sensitive): mode confirm-sensitive asks before edit_file'
    );
    expect(texts(edit, '.anb-answer .anb-badge')).toEqual(['approved']);
    expect(
      edit.querySelector('.anb-diff tr.anb-line-add .anb-code')?.textContent
    ).toBe('        total = 0.0');

    // The edit's output repeats its diff, so it starts folded; a command's output starts open.
    const outputOf = (card: HTMLElement): HTMLDetailsElement | null =>
      card.querySelector<HTMLDetailsElement>('details.anb-output-card');
    expect(outputOf(edit)?.open).toBe(false);
    expect(outputOf(edit)?.querySelector('summary')?.textContent).toMatch(
      /^Output \(\d+ lines\)$/
    );
    expect(outputOf(call(host, 'run_command'))?.open).toBe(true);

    const command = call(host, 'run_command');
    expect(command.querySelector('.anb-call-arg')?.textContent).toBe(
      'python -m pytest -q'
    );
    expect(command.querySelector('.anb-output')?.textContent).toContain(
      '2 passed'
    );
    // A real pytest run: usually over a second, sometimes just under.
    expect(command.querySelector('summary .anb-muted')?.textContent).toMatch(
      /^(\d+\.\d\d s|\d+ ms)$/
    );
    // The fixture runs without the OS sandbox; other tools say nothing about it.
    expect(texts(command, 'summary .anb-sandbox')).toEqual(['not sandboxed']);
    expect(read.querySelector('.anb-sandbox')).toBeNull();

    const summary = host.querySelector('.anb-summary') as HTMLElement;
    expect(summary.querySelector('.anb-badge')?.textContent).toBe('success');
    expect(summary.textContent).toContain(
      `tokens${total.toLocaleString('en-US')}`
    );
    expect(summary.textContent).toContain('costnot priced');
    // The review list names the file the run changed, with its diff from before the run.
    expect(texts(summary, '.anb-review-path')).toEqual(['shop/cart.py']);
    expect(
      texts(summary, '.anb-review-diff tr.anb-line-add .anb-code')
    ).toEqual([
      '        total = 0.0',
      '        discounted = self.total() * (1 - percent / 100)',
      '        return round(discounted, 2)'
    ]);
    // The command (pytest) is covered by undo now: no "not tracked" note.
    expect(summary.querySelector('.anb-note')).toBeNull();
    expect(texts(host, '.anb-step-files code')).toEqual([
      'shop/cart.py',
      'shop/cart.py'
    ]);
    // The assistant's Markdown is rendered, and its <script> stays text.
    expect(host.querySelector('.anb-markdown strong')?.textContent).toBe(
      'floats'
    );
    expect(host.querySelector('script')).toBeNull();
  });

  it('says when a command ran in the OS sandbox, from the raw transcript', async () => {
    const raw = rawFixture('every_tool_session') as {
      events: Array<Record<string, unknown>>;
    };
    for (const event of raw.events) {
      if (event.kind === 'tool_result' && event.tool === 'run_command') {
        event.sandboxed = true;
      }
      if (event.kind === 'tool_result' && event.tool === 'read_file') {
        event.sandboxed = 'yes'; // not a boolean: shown as nothing
      }
    }
    const host = await render(parsePayload(raw));
    const label = call(host, 'run_command').querySelector('.anb-sandbox');
    expect(label?.textContent).toBe('sandboxed');
    expect(label?.classList.contains('anb-sandbox-on')).toBe(true);
    expect(call(host, 'read_file').querySelector('.anb-sandbox')).toBeNull();
  });

  it('shows a denial with its reason and a guardrail block with its message', async () => {
    const host = await render(fixture('denied_and_blocked'));
    const [denied, blocked] = [
      call(host, 'edit_file', 0),
      call(host, 'edit_file', 1)
    ];
    expect(denied.dataset.status).toBe('denied');
    expect(denied.open).toBe(true);
    expect(denied.querySelector('.anb-answer')?.textContent).toBe(
      'Answer: denied — keep the public API stable'
    );
    expect(denied.querySelector('.anb-error')?.textContent).toContain(
      'The user declined'
    );
    expect(texts(denied, '.anb-section-title')).toContain(
      'Proposed change (not applied)'
    );
    expect(blocked.dataset.status).toBe('blocked');
    expect(blocked.querySelector('summary .anb-badge')?.textContent).toBe(
      'blocked'
    );
    expect(blocked.querySelector('.anb-error')?.textContent).toMatch(
      /^Guardrail: 'pyproject.toml'/
    );
  });

  it('marks a dry run and its unapplied diff', async () => {
    const host = await render(fixture('dry_run'));
    expect(texts(host, '.anb-run-header .anb-badge')).toEqual(['dry run']);
    const edit = call(host, 'edit_file');
    expect(edit.dataset.status).toBe('dry-run');
    expect(texts(edit, '.anb-section-title')).toContain(
      'Diff (not applied: dry run)'
    );
  });

  it('shows failures and a partial finish', async () => {
    const host = await render(fixture('failure'));
    expect(call(host, 'edit_file').dataset.status).toBe('failed');
    const missing = call(host, 'read_file', 0);
    expect(missing.querySelector('.anb-error')?.textContent).toContain(
      "'shop/missing.py' does not exist"
    );
    const summary = host.querySelector('.anb-summary') as HTMLElement;
    expect(summary.className).toContain('anb-summary-partial');
    expect(summary.textContent).toContain(
      "Stopped after 3 steps (the agent's max_steps)."
    );
  });

  it('keeps only the first rows of the 5,000-line diff in the DOM', async () => {
    const host = await render(fixture('long_diff'));
    expect(
      host.querySelectorAll('.anb-diff tbody tr').length
    ).toBeLessThanOrEqual(400);
    expect(host.querySelector('.anb-diff-stats')?.textContent).toBe(
      '+5100 −0 in 1 file'
    );
    // The review repeats the file, its diff folded (capped by the kernel) until opened.
    const review = host.querySelector<HTMLDetailsElement>('.anb-review-diff');
    expect(review?.open).toBe(false);
    expect(review?.querySelector('summary')?.textContent).toBe(
      'Diff (401 lines)'
    );
    // The write_file arguments (5,100 lines of content) are collapsed too.
    const content = call(host, 'write_file').querySelector(
      '.anb-arg-value'
    ) as HTMLElement;
    expect(content.textContent?.split('\n')).toHaveLength(12);
  });

  it('renders real hook results: passed, and failed with its long output collapsed', async () => {
    const host = await render(fixture('every_tool_session'));
    const edit = call(host, 'edit_file');
    expect(
      edit.querySelector('.anb-hooks .anb-section-title')?.textContent
    ).toBe('Hooks: 1 passed');
    const patch = call(host, 'apply_patch');
    expect(
      patch.querySelector('.anb-hooks .anb-section-title')?.textContent
    ).toBe('Hooks: 1 of 2 failed');
    const [compile, lint] = Array.from(
      patch.querySelectorAll<HTMLDetailsElement>('details.anb-hook')
    );
    expect(texts(compile, 'summary .anb-badge')).toEqual(['passed']);
    expect(compile.textContent).toContain('No output.');
    expect(lint.className).toContain('anb-hook-failed');
    expect(lint.querySelector('summary')?.textContent).toContain(
      'FAILED (exit 1)'
    );
    // 12 lines of output: more than HOOK_OUTPUT_LINES, so the card starts closed.
    expect(lint.open).toBe(false);
    expect(
      lint.querySelector('.anb-output')?.textContent?.split('\n')
    ).toHaveLength(12);
  });

  it('says how many tokens the prompt cache served, as the Python renderer does', async () => {
    const raw = JSON.parse(
      JSON.stringify(rawFixture('every_tool_session'))
    ) as {
      events: Record<string, unknown>[];
    };
    const finished = raw.events[raw.events.length - 1];
    finished.total_tokens = 12400;
    finished.total_cached_tokens = 9800;
    const host = await render(parsePayload(raw));
    expect(host.querySelector('.anb-summary')?.textContent).toContain(
      'tokens12,400, 9,800 cached'
    );
    // An older transcript has no cached count: the line stays as it was.
    delete finished.total_cached_tokens;
    const older = await render(parsePayload(raw));
    expect(older.querySelector('.anb-summary')?.textContent).toContain(
      'tokens12,400cost'
    );
  });

  it('shows a live run as running with the tokens so far', async () => {
    const payload = fixture('every_tool_session');
    const events = payload.events.slice(0, 12);
    const costs = events.filter(event => event.kind === 'cost');
    const last = costs[costs.length - 1];
    const sofar = last.kind === 'cost' ? last.total_tokens : -1;
    const host = await render({ ...payload, events });
    expect(texts(host, '.anb-summary .anb-badge')).toEqual(['running']);
    expect(host.querySelector('.anb-summary')?.textContent).toContain(
      `tokens${sofar.toLocaleString('en-US')}`
    );
  });

  it('says which run a follow-up continues, in which thread, and how large the thread is', async () => {
    const payload = fixture('follow_up');
    const host = await render(payload);
    const started = payload.events[0];
    const thread = started.kind === 'run_started' ? started.thread : null;
    expect(thread).not.toBeNull();
    const line = host.querySelector('.anb-run-thread')?.textContent ?? '';
    expect(line).toMatch(
      /^continues run [0-9a-f]{6}…, thread `main` · 1 earlier run, 2 turns, ~[0-9,]+ tokens of context$/
    );
    expect(host.querySelector<HTMLElement>('.anb-run-thread')?.title).toContain(
      thread?.follows_run ?? 'missing'
    );
  });

  it('names the fork a thread came from, and a run with no task carries on', async () => {
    const host = await render(fixture('fork'));
    expect(host.querySelector('.anb-run-thread')?.textContent).toMatch(
      /^forked from step 1 of run [0-9a-f]{12} \(thread 'main'\) into thread `what-if` · /
    );
    expect(host.querySelector('.anb-task')?.textContent).toBe(
      "(carries on from the fork's step)"
    );
  });

  it('shows no thread line for a transcript from before threads', async () => {
    const host = await render(fixture('dry_run'));
    const started = fixture('dry_run').events[0];
    expect(started.kind === 'run_started' && started.thread).not.toBeNull();
    const raw = JSON.parse(JSON.stringify(fixture('dry_run'))) as IRunPayload;
    const first = raw.events[0];
    if (first.kind === 'run_started') {
      first.thread = null;
    }
    const old = await render(raw);
    expect(host.querySelector('.anb-run-thread')?.textContent).toBe(
      'new thread `main`'
    );
    expect(old.querySelector('.anb-run-thread')).toBeNull();
  });

  it('shows the code a kernel tool ran, coloured, and the plot it made', async () => {
    const host = await render(fixture('kernel'));
    const run = call(host, 'run_python');
    expect(run.dataset.status).toBe('ran');
    const code = run.querySelector('pre.anb-code-block');
    expect(code?.textContent).toContain('plt.bar(range(len(totals)), totals)');
    expect(texts(run, '.anb-code-block .anb-tok-keyword')).toContain('import');
    expect(run.querySelector('.anb-args')?.textContent ?? '').not.toContain(
      'plt.bar'
    );
    const image = run.querySelector<HTMLImageElement>('img.anb-image');
    expect(image?.src.startsWith('data:image/png;base64,iVBORw0KGgo')).toBe(
      true
    );
    expect(image?.alt).toMatch(/^<Figure of \d+x\d+ px, 1 axes>$/);
    expect(run.querySelector('.anb-output')?.textContent).toContain(
      'totals: [3, 12]'
    );
    expect(
      call(host, 'propose_cell').querySelector('.anb-code-block')?.textContent
    ).toBe('totals = [sum(r) for r in rows]');
  });

  it('drops an image that is not plain base64 PNG', () => {
    const raw = JSON.parse(JSON.stringify(fixture('kernel'))) as {
      events: Array<Record<string, unknown>>;
    };
    const result = raw.events.find(
      e => e.kind === 'tool_result' && e.tool === 'run_python'
    );
    expect(result).toBeDefined();
    if (result !== undefined) {
      result.images = [
        { mime: 'image/svg+xml', data: 'PHN2Zz4=', alt: 'svg' },
        { mime: 'image/png', data: '"><script>alert(1)</script>', alt: 'x' }
      ];
    }
    const parsed = parsePayload(raw);
    const event = parsed.events.find(
      e => e.kind === 'tool_result' && e.tool === 'run_python'
    );
    expect(event?.kind === 'tool_result' && event.images).toEqual([]);
  });

  it("folds the model's thinking before each step's answer, redacted, and counts its tokens", async () => {
    const payload = fixture('thinking');
    const host = await render(payload);
    const steps = Array.from(
      host.querySelectorAll<HTMLDetailsElement>('details.anb-step')
    );
    const folds = steps.map(step =>
      step.querySelector<HTMLDetailsElement>(':scope > details.anb-thinking')
    );
    expect(
      folds.map(fold => fold?.querySelector('summary')?.textContent)
    ).toEqual([
      'Thinking (14 words)',
      'Thinking (13 words)', // its secret is one word once redacted, as in the HTML twin
      'Thinking (3 words)'
    ]);
    expect(folds.every(fold => fold !== null && !fold.open)).toBe(true);
    expect(folds[0]?.querySelector('.anb-thinking-text')?.textContent).toBe(
      'The total starts from an int. I should read cart.py before I change anything.'
    );
    // It comes before what the model then said and did.
    const second = steps[1];
    const order = Array.from(second.children).map(child => child.className);
    expect(order.indexOf('anb-thinking')).toBeLessThan(
      order.findIndex(name => name.includes('anb-call'))
    );
    const text = host.textContent ?? '';
    expect(text).not.toContain('sk-ant-api03-abcdefghijklmnopqrstuvwx');
    expect(folds[1]?.textContent).toContain(
      'The token [REDACTED] is not needed.'
    );
    const finished = payload.events[payload.events.length - 1];
    const thinking =
      finished.kind === 'run_finished' ? finished.total_reasoning_tokens : 0;
    expect(thinking).toBeGreaterThan(0);
    expect(host.querySelector('.anb-summary')?.textContent).toContain(
      `, ${thinking.toLocaleString('en-US')} thinking`
    );
  });

  it('shows arguments it could not read as the model sent them', async () => {
    const raw = JSON.parse(JSON.stringify(fixture('dry_run'))) as {
      events: Array<Record<string, unknown>>;
    };
    const request = raw.events.find(e => e.kind === 'tool_call');
    expect(request).toBeDefined();
    if (request !== undefined) {
      request.arguments = {};
      request.raw_arguments = '{"path": "shop/cart.py", "old_str": ';
    }
    const host = await render(parsePayload(raw));
    const section = host.querySelector('.anb-raw-args');
    expect(section?.querySelector('.anb-section-title')?.textContent).toBe(
      'The arguments as the model sent them'
    );
    expect(section?.querySelector('pre')?.textContent).toBe(
      '{"path": "shop/cart.py", "old_str": '
    );
    const old = await render(fixture('dry_run'));
    expect(old.querySelector('.anb-raw-args')).toBeNull(); // readable arguments show as before
  });
});
