import { buildRunView, callStatus } from '../src/model';
import { parsePayload, PayloadError } from '../src/types';
import { fixture, rawFixture } from './helpers';

describe('parsePayload', () => {
  it('reads every fixture and keeps every event', () => {
    for (const name of [
      'every_tool_session',
      'denied_and_blocked',
      'dry_run',
      'failure',
      'long_diff'
    ] as const) {
      const raw = rawFixture(name) as { events: unknown[] };
      const payload = fixture(name);
      expect(payload.version).toBe(1);
      expect(payload.events).toHaveLength(raw.events.length);
      expect(payload.events[0].kind).toBe('run_started');
      expect(payload.events[payload.events.length - 1].kind).toBe(
        'run_finished'
      );
    }
  });

  it('refuses what is not a version-1 transcript, saying why', () => {
    expect(() => parsePayload('nope')).toThrow(PayloadError);
    expect(() => parsePayload({ version: 2, events: [] })).toThrow(
      /version 2 is not supported/
    );
    expect(() => parsePayload({ version: 1 })).toThrow(/no "events" list/);
  });

  it('skips unknown kinds and fills missing fields', () => {
    const payload = parsePayload({
      version: 1,
      run_id: 'r',
      events: [
        { kind: 'from_the_future', x: 1 },
        { kind: 'tool_result', call_id: 'c', tool: 't' },
        'not an event'
      ]
    });
    expect(payload.events).toHaveLength(1);
    const [result] = payload.events;
    expect(result.kind).toBe('tool_result');
    if (result.kind === 'tool_result') {
      expect(result.hooks).toEqual([]);
      expect(result.diff).toBeNull();
      expect(result.output).toBe('');
      expect(result.sandboxed).toBeNull();
    }
  });
});

describe('buildRunView', () => {
  it('groups the whole job into steps with one call each', () => {
    const view = buildRunView(fixture('every_tool_session').events);
    expect(view.started?.mode).toBe('confirm-sensitive');
    expect(view.steps.map(step => step.step)).toEqual([1, 2, 3, 4, 5, 6]);
    const calls = view.steps.flatMap(step => step.calls);
    expect(calls.map(call => [call.tool, call.status])).toEqual([
      ['read_file', 'ran'],
      ['grep', 'ran'],
      ['edit_file', 'approved'],
      ['apply_patch', 'approved'],
      ['run_command', 'approved']
    ]);
    expect(calls[2].asked?.sensitivity).toBe('sensitive');
    expect(calls[2].result?.diff).toContain('+        total = 0.0');
    expect(view.steps[0].text).toBe('Let me read the cart first.');
    expect(view.finished?.status).toBe('success');
    expect(view.lastCost?.total_tokens).toBe(view.finished?.total_tokens);
  });

  it('labels denied, blocked, dry-run and failed calls', () => {
    const denied = buildRunView(fixture('denied_and_blocked').events);
    const [rename, bump] = denied.steps.flatMap(step => step.calls);
    expect([rename.status, bump.status]).toEqual(['denied', 'blocked']);
    expect(rename.answered?.reason).toBe('keep the public API stable');
    expect(bump.result?.error).toMatch(/protected file/);

    const dry = buildRunView(fixture('dry_run').events);
    expect(dry.steps[0].calls[0].status).toBe('dry-run');
    expect(dry.started?.dry_run).toBe(true);

    const failure = buildRunView(fixture('failure').events);
    expect(failure.steps.flatMap(s => s.calls).map(c => c.status)).toEqual([
      'failed',
      'failed',
      'ran'
    ]);
    expect(failure.finished?.status).toBe('partial');
    expect(failure.finished?.stop_reason).toBe('max_steps');
  });

  it('shows a call still waiting, and a live run without a finish', () => {
    const events = fixture('every_tool_session').events.filter(
      event => event.kind !== 'run_finished' && event.at <= 0 + Infinity
    );
    const cut = events.findIndex(
      event => event.kind === 'confirmation_answered'
    );
    const view = buildRunView(events.slice(0, cut));
    const waiting = view.steps.flatMap(step => step.calls).pop();
    expect(waiting?.status).toBe('pending');
    expect(view.finished).toBeNull();
    expect(callStatus(null, null)).toBe('pending');
  });

  it('names every outcome the kernel reports', () => {
    const result = (status: string, success = false) =>
      ({ status, success }) as unknown as Parameters<typeof callStatus>[0];
    expect(callStatus(result('skipped'), null)).toBe('skipped');
    expect(callStatus(result('needs_person'), null)).toBe('needs a person');
    expect(callStatus(result('invalid'), null)).toBe('invalid');
    expect(callStatus(result('blocked'), null)).toBe('blocked');
    expect(callStatus(result('failed'), null)).toBe('failed');
    expect(callStatus(result('ok', true), null)).toBe('ran');
  });
});
