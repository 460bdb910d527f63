/**
 * The teaching lens in the timeline: each step's model call (messages, new
 * ones, the context meter), the inspector fetched from the kernel when opened
 * and drawn as text, and the run header's meter.
 */

import { meterText, renderInspection } from '../src/inspector';
import { buildRunView } from '../src/model';
import { renderModelCall, renderRun } from '../src/timeline';
import { parsePayload } from '../src/types';
import type { IInspection } from '../src/inspector';
import type { IUndoResult, IUndoRunner } from '../src/undo';
import { fixture, texts } from './helpers';

const METER = {
  parts: {
    system: 222,
    tools: 1240,
    earlier: 0,
    messages: 32,
    tool_results: 152
  },
  window: 128000,
  compressed: ''
};

function payload(events: unknown[]) {
  return parsePayload({ version: 1, run_id: 'ab12cd34ef56', events });
}

class FakeRunner implements IUndoRunner {
  asked: Array<[string, number]> = [];
  constructor(private readonly answer: IInspection) {}
  canRun(): boolean {
    return true;
  }
  run(): Promise<IUndoResult> {
    return Promise.resolve({ ok: true, message: '' });
  }
  inspect(runId: string, step: number): Promise<IInspection> {
    this.asked.push([runId, step]);
    return Promise.resolve(this.answer);
  }
}

const settle = () => new Promise(resolve => setTimeout(resolve, 0));

describe('model requests', () => {
  it('reads the compact form and the whole one alike', () => {
    const parsed = payload([
      {
        kind: 'model_request',
        step: 1,
        request: { messages: 2, new: 2 },
        meter: METER
      },
      {
        kind: 'model_request',
        step: 2,
        request: { tools: 'h', keep: 2, add: ['a', 'b'], messages: 4 },
        parts: { a: {}, b: {} },
        meter: { parts: { system: -5, tools: 'x' }, window: 1000 }
      }
    ]);
    const view = buildRunView(parsed.events);
    expect(
      view.steps.map(s => [s.request?.messages, s.request?.newMessages])
    ).toEqual([
      [2, 2],
      [4, 2]
    ]);
    expect(view.lastMeter?.parts).toEqual({
      system: 0,
      tools: 0,
      earlier: 0,
      messages: 0,
      tool_results: 0
    });
  });

  it('says the meter by part against the window', () => {
    expect(meterText(METER)).toBe(
      'context 1,646 tokens of 128,000 (1%): system prompt 222 · tool schemas 1,240 · earlier cells 0 · this run 32 · tool results 152'
    );
    expect(meterText(null)).toBe('');
  });

  it('shows the last meter in the run header', async () => {
    const host = document.createElement('div');
    await renderRun(
      payload([
        { kind: 'run_started', task: 't', tools: [] },
        { kind: 'step_started', step: 1 },
        {
          kind: 'model_request',
          step: 1,
          request: { messages: 2, new: 2 },
          meter: METER
        }
      ]),
      host
    );
    expect(texts(host, '.anb-run-meter')).toEqual([meterText(METER)]);
    expect(texts(host, '.anb-step-meter')).toEqual([meterText(METER)]);
  });

  it('keeps rendering a real run whose transcript has every request whole', async () => {
    const run = fixture('every_tool_session');
    const requests = run.events.filter(e => e.kind === 'model_request');
    expect(requests.length).toBeGreaterThan(0);
    const host = document.createElement('div');
    await renderRun(run, host);
    expect(host.querySelectorAll('details.anb-model-call')).toHaveLength(
      requests.length
    );
  });
});

describe('the inspector', () => {
  const data = {
    step: 2,
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: '<img src=x onerror=alert(1)>' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'c1',
            function: { name: 'read_file', arguments: '{"path":  "a.py"}' }
          }
        ]
      },
      { role: 'tool', tool_call_id: 'c1', content: 'print(1)' }
    ],
    new: [2, 3],
    tools: [{ type: 'function', function: { name: 'read_file' } }],
    reply: {
      content: 'Done.',
      tool_calls: [
        { id: 'c2', name: 'read_file', arguments: '{"path":"b.py" }' }
      ],
      thinking: '',
      usage: {
        input_tokens: 11,
        cached_tokens: 3,
        output_tokens: 7,
        cost_usd: 0.0012,
        priced: true
      }
    }
  };

  it('marks the new messages and sets everything as text', () => {
    const node = renderInspection(data);
    expect(node.querySelectorAll('.anb-inspect-message')).toHaveLength(4);
    expect(
      Array.from(node.querySelectorAll('.anb-inspect-new')).map(
        n => (n as HTMLElement).dataset.role
      )
    ).toEqual(['assistant', 'tool']);
    expect(node.querySelector('img')).toBeNull();
    expect(node.textContent).toContain('<img src=x onerror=alert(1)>');
    expect(texts(node, '.anb-inspect-raw-args')).toEqual(['{"path":"b.py" }']);
    expect(texts(node, '.anb-inspect-usage')[0]).toBe(
      '11 input (3 cached) · 7 output · $0.0012'
    );
    const json = JSON.parse(texts(node, '.anb-inspect-json pre')[0]);
    expect(json).toEqual({ messages: data.messages, tools: data.tools });
  });

  it('survives what is not an inspection', () => {
    expect(
      renderInspection('nope').querySelectorAll('.anb-inspect-message')
    ).toHaveLength(0);
    expect(
      renderInspection({ messages: [null, 3], new: ['x'] }).textContent
    ).toContain('2 messages (0 new');
  });

  it('asks the kernel once, when the step is first opened', async () => {
    const runner = new FakeRunner({ ok: true, message: '', data });
    const host = document.createElement('div');
    await renderRun(
      payload([
        { kind: 'step_started', step: 2 },
        {
          kind: 'model_request',
          step: 2,
          request: { messages: 4, new: 2 },
          meter: METER
        }
      ]),
      host,
      {},
      runner
    );
    const block = host.querySelector(
      'details.anb-model-call'
    ) as HTMLDetailsElement;
    expect(block.querySelector('summary')?.textContent).toBe(
      'What the model saw: the model got 4 messages (2 new)'
    );
    expect(runner.asked).toEqual([]);
    block.open = true;
    block.dispatchEvent(new Event('toggle'));
    await settle();
    expect(runner.asked).toEqual([['ab12cd34ef56', 2]]);
    expect(block.querySelectorAll('.anb-inspect-message')).toHaveLength(4);
    block.open = false;
    block.dispatchEvent(new Event('toggle'));
    block.open = true;
    block.dispatchEvent(new Event('toggle'));
    expect(runner.asked).toHaveLength(1);
  });

  it('says why when the kernel cannot answer, and what to run without one', async () => {
    const view = buildRunView(
      payload([
        { kind: 'model_request', step: 1, request: { messages: 2, new: 2 } }
      ]).events
    );
    const failing = renderModelCall(view.steps[0], () =>
      Promise.resolve({
        ok: false,
        message: 'Run x has no model request at step 1.',
        data: null
      })
    ) as HTMLDetailsElement;
    failing.open = true;
    failing.dispatchEvent(new Event('toggle'));
    await settle();
    expect(texts(failing, '.anb-undo-error')).toEqual([
      'Run x has no model request at step 1.'
    ]);
    const offline = renderModelCall(view.steps[0], null) as HTMLDetailsElement;
    offline.open = true;
    offline.dispatchEvent(new Event('toggle'));
    expect(offline.textContent).toContain('%architect inspect RUN:1');
  });
});
