/**
 * The timeline's view model: the flat event list grouped into steps, with the
 * events of one tool call (request, confirmation, result) joined by call id.
 */

import type {
  IConfirmationAnswered,
  IConfirmationAsked,
  IContextMeter,
  ICostUpdate,
  IModelRequest,
  IRunFinished,
  IRunStarted,
  IRunWarning,
  IToolCall,
  IToolResult,
  RunEvent
} from './types';
import { KERNEL_ENTRY } from './types';

/** What became of a tool call, as the timeline labels it. */
export type CallStatus =
  | 'approved'
  | 'ran'
  | 'denied'
  | 'blocked'
  | 'dry-run'
  | 'failed'
  | 'aborted'
  | 'skipped'
  | 'needs a person'
  | 'invalid'
  | 'pending';

export interface ICallView {
  callId: string;
  tool: string;
  step: number;
  arguments: Record<string, unknown>;
  /** The arguments as the model wrote them, when they could not be read. */
  rawArguments: string | null;
  asked: IConfirmationAsked | null;
  answered: IConfirmationAnswered | null;
  result: IToolResult | null;
  status: CallStatus;
}

export interface IStepView {
  step: number;
  /** What the model thought before this step's answer ('' when it did not say). */
  thinking: string;
  text: string;
  calls: ICallView[];
  cost: ICostUpdate | null;
  warnings: IRunWarning[];
  /** The files this step's calls changed, each once, in the order they were first changed. */
  changedFiles: string[];
  /** The person's variables this step's calls changed, each name once, in the order first changed. */
  changedVariables: string[];
  /** What the model was sent at this step (the last request, if it was sent again). */
  request: IModelRequest | null;
}

export type TodoStatus = 'pending' | 'in_progress' | 'done';

export interface ITodoItem {
  status: TodoStatus;
  text: string;
}

const TODO_MARKS: Record<string, TodoStatus> = {
  '[ ]': 'pending',
  '[~]': 'in_progress',
  '[x]': 'done',
  '[X]': 'done'
};

/** The items of a todo list ('[x] text' lines), or null when one is not a checklist line (the tool refused
 * such a list, so it never became the list). */
export function parseTodo(lines: unknown): ITodoItem[] | null {
  if (!Array.isArray(lines)) {
    return null;
  }
  const items: ITodoItem[] = [];
  for (const line of lines) {
    const trimmed = typeof line === 'string' ? line.trim() : '';
    const status = TODO_MARKS[trimmed.slice(0, 3)];
    const text = trimmed.slice(3).split(/\s+/).filter(Boolean).join(' ');
    if (status === undefined || !text) {
      return null;
    }
    items.push({ status, text });
  }
  return items;
}

export interface IRunView {
  started: IRunStarted | null;
  /** The model's checklist as it stands: the thread's at the start, then each todo call that succeeded. */
  todo: ITodoItem[];
  steps: IStepView[];
  /** Warnings raised before the first step. */
  warnings: IRunWarning[];
  finished: IRunFinished | null;
  /** The last cost update: running totals while a run is live. */
  lastCost: ICostUpdate | null;
  /** The last request's context meter. */
  lastMeter: IContextMeter | null;
}

/** The label of a call from its result status and the person's answer. */
export function callStatus(
  result: IToolResult | null,
  answered: IConfirmationAnswered | null
): CallStatus {
  if (result === null) {
    if (answered?.decision === 'deny') {
      return 'denied';
    }
    if (answered?.decision === 'abort') {
      return 'aborted';
    }
    return 'pending';
  }
  switch (result.status) {
    case 'ok':
      return answered?.decision === 'approve' ? 'approved' : 'ran';
    case 'denied':
      return 'denied';
    case 'blocked':
      return 'blocked';
    case 'dry_run':
      return 'dry-run';
    case 'aborted':
      return 'aborted';
    case 'skipped':
      return 'skipped';
    case 'needs_person':
      return 'needs a person';
    case 'invalid':
      return 'invalid';
    default:
      return result.success ? 'ran' : 'failed';
  }
}

function newStep(step: number): IStepView {
  return {
    step,
    thinking: '',
    text: '',
    calls: [],
    cost: null,
    warnings: [],
    changedFiles: [],
    changedVariables: [],
    request: null
  };
}

/** Group a run's events into the timeline's steps and calls. */
export function buildRunView(events: readonly RunEvent[]): IRunView {
  const view: IRunView = {
    started: null,
    todo: [],
    steps: [],
    warnings: [],
    finished: null,
    lastCost: null,
    lastMeter: null
  };
  const steps = new Map<number, IStepView>();
  const calls = new Map<string, ICallView>();

  const stepOf = (step: number): IStepView => {
    let found = steps.get(step);
    if (found === undefined) {
      found = newStep(step);
      steps.set(step, found);
      view.steps.push(found);
    }
    return found;
  };
  const callOf = (
    event: IToolCall | IConfirmationAsked | IToolResult,
    step: number
  ): ICallView => {
    let found = calls.get(event.call_id);
    if (found === undefined) {
      found = {
        callId: event.call_id,
        tool: event.tool,
        step,
        arguments: 'arguments' in event ? event.arguments : {},
        rawArguments: null,
        asked: null,
        answered: null,
        result: null,
        status: 'pending'
      };
      calls.set(event.call_id, found);
      stepOf(step).calls.push(found);
    }
    return found;
  };
  let current = 0;

  for (const event of events) {
    switch (event.kind) {
      case 'run_started':
        view.started = event;
        view.todo = parseTodo(event.todo ?? []) ?? [];
        break;
      case 'step_started':
        current = event.step;
        stepOf(event.step);
        break;
      case 'text_delta':
        stepOf(event.step).text += event.text;
        break;
      case 'thinking_delta':
        stepOf(event.step).thinking += event.text;
        break;
      case 'tool_call': {
        const found = callOf(event, event.step);
        found.arguments = event.arguments;
        found.rawArguments = event.raw_arguments;
        break;
      }
      case 'confirmation_asked':
        callOf(event, current).asked = event;
        break;
      case 'confirmation_answered': {
        const call = calls.get(event.call_id);
        if (call !== undefined) {
          call.answered = event;
        }
        break;
      }
      case 'tool_result': {
        const call = callOf(event, event.step);
        call.result = event;
        if (event.tool === 'todo' && event.success) {
          view.todo = parseTodo(call.arguments.items) ?? view.todo;
        }
        break;
      }
      case 'model_request':
        stepOf(event.step).request = event;
        view.lastMeter = event.meter ?? view.lastMeter;
        break;
      case 'cost':
        stepOf(event.step).cost = event;
        view.lastCost = event;
        break;
      case 'warning':
        if (current > 0) {
          stepOf(current).warnings.push(event);
        } else {
          view.warnings.push(event);
        }
        break;
      case 'run_finished':
        view.finished = event;
        break;
    }
  }
  for (const call of calls.values()) {
    call.status = callStatus(call.result, call.answered);
  }
  view.steps.sort((a, b) => a.step - b.step);
  for (const step of view.steps) {
    const files = step.calls.flatMap(call => call.result?.changed_files ?? []);
    step.changedFiles = [...new Set(files)];
    const names = step.calls.flatMap(call =>
      (call.result?.changed_state ?? []).map(change => change.name)
    );
    step.changedVariables = [...new Set(names)];
  }
  return view;
}

/** Whether the step changed anything undo can rewind: files, or the person's variables. */
export function stepChanged(step: IStepView): boolean {
  return step.changedFiles.length > 0 || step.changedVariables.length > 0;
}

/**
 * For each entry of the review (each file the run changed, and `KERNEL_ENTRY`
 * for the person's variables), the steps that changed it (ascending).
 */
export function stepsByFile(view: IRunView): Map<string, number[]> {
  const steps = new Map<string, number[]>();
  const add = (path: string, step: number): void => {
    steps.set(path, [...(steps.get(path) ?? []), step]);
  };
  for (const step of view.steps) {
    for (const path of step.changedFiles) {
      add(path, step.step);
    }
    if (step.changedVariables.length > 0) {
      add(KERNEL_ENTRY, step.step);
    }
  }
  return steps;
}
