import { buildRunView, parseTodo } from '../src/model';
import { renderRun } from '../src/timeline';
import { parsePayload } from '../src/types';
import { texts } from './helpers';

const started = {
  kind: 'run_started',
  run_id: 'r1',
  at: 0,
  task: 'work',
  agent: 'build',
  model: 'scripted',
  mode: 'yolo',
  dry_run: false,
  workspace: '/ws',
  tools: ['todo'],
  thread: null,
  instructions: ['AGENTS.md (39 chars)'],
  todo: ['[ ] carried over']
};

function todoCall(id: string, items: unknown): unknown[] {
  return [
    {
      kind: 'tool_call',
      run_id: 'r1',
      at: 1,
      step: 1,
      call_id: id,
      tool: 'todo',
      arguments: { items }
    },
    {
      kind: 'tool_result',
      run_id: 'r1',
      at: 2,
      step: 1,
      call_id: id,
      tool: 'todo',
      status: 'ok',
      success: !(Array.isArray(items) && items.includes('bad')),
      output: '',
      error: null,
      diff: null,
      hooks: [],
      duration_s: 0,
      images: [],
      sandboxed: null,
      changed_files: []
    }
  ];
}

const finished = {
  kind: 'run_finished',
  run_id: 'r1',
  at: 3,
  status: 'success',
  stop_reason: 'completed',
  message: 'Done.',
  steps: 1,
  final_text: '',
  files_changed: [],
  total_tokens: 10,
  total_cost_usd: 0,
  duration_s: 1
};

function payload(events: unknown[]) {
  return parsePayload({ version: 1, run_id: 'r1', events });
}

describe('the todo list', () => {
  it('reads checklist lines and refuses anything else', () => {
    expect(parseTodo(['[x] a', ' [~]  b  c ', '[ ] d'])).toEqual([
      { status: 'done', text: 'a' },
      { status: 'in_progress', text: 'b c' },
      { status: 'pending', text: 'd' }
    ]);
    expect(parseTodo(['no mark'])).toBeNull();
    expect(parseTodo(['[x]   '])).toBeNull();
    expect(parseTodo('[x] a')).toBeNull();
  });

  it('starts from the thread, follows successful calls only, and shows under the header', async () => {
    const events = [
      started,
      ...todoCall('c1', ['[x] read', '[~] fix']),
      ...todoCall('c2', ['bad']),
      finished
    ];
    const view = buildRunView(payload(events).events);
    expect(view.todo.map(item => item.text)).toEqual(['read', 'fix']);
    const host = document.createElement('div');
    await renderRun(payload(events), host);
    const root = host.querySelector('.anb-run') as HTMLElement;
    const order = Array.from(root.children).map(child => child.className);
    expect(order.indexOf('anb-todo')).toBe(order.indexOf('anb-run-header') + 1);
    expect(texts(host, '.anb-todo-title')).toEqual(['Todo · 1 of 2 done']);
    expect(host.querySelector('.anb-todo-done s')?.textContent).toBe('read');
    expect(host.querySelector('.anb-todo-in_progress b')?.textContent).toBe(
      'fix'
    );
    expect(host.querySelector('.anb-summary')?.textContent).toContain(
      '1 of 2 done'
    );
    expect(texts(host, '.anb-run-instructions')).toEqual([
      'Instructions: AGENTS.md (39 chars)'
    ]);
  });

  it('shows the carried list before any call, and nothing without one', async () => {
    const host = document.createElement('div');
    await renderRun(payload([started, finished]), host);
    expect(texts(host, '.anb-todo-title')).toEqual(['Todo · 0 of 1 done']);
    await renderRun(
      payload([{ ...started, todo: [], instructions: [] }, finished]),
      host
    );
    expect(host.querySelector('.anb-todo')).toBeNull();
    expect(host.querySelector('.anb-run-instructions')).toBeNull();
  });
});
