/**
 * The run transcript as the kernel emits it (`Transcript.to_payload()` in
 * `architect_nb/agent/events.py`), and a parser that turns untrusted JSON into
 * these types. Unknown event kinds are skipped, so a newer kernel still renders.
 */

/** The MIME type of a run transcript. */
export const RUN_MIME_TYPE = 'application/vnd.architect-nb.run+json';

/** The transcript versions this renderer understands. */
export const SUPPORTED_VERSION = 1;

interface IEventBase {
  run_id: string;
  at: number;
}

/** The conversation a run continues (`ThreadInfo` in architect_nb/agent/events.py). */
export interface IThreadInfo {
  name: string;
  id: string;
  follows_run: string | null;
  forked_from: string | null;
  runs: number;
  turns: number;
  context_tokens: number;
  cost_usd: number;
}

export interface IRunStarted extends IEventBase {
  kind: 'run_started';
  task: string;
  agent: string;
  model: string;
  mode: string;
  dry_run: boolean;
  workspace: string;
  tools: string[];
  thread: IThreadInfo | null;
  /** The project's instruction files in the system prompt, each with its size (absent in older runs). */
  instructions?: string[];
  /** The checklist the thread carries, as '[ ] item' lines (absent in older runs). */
  todo?: string[];
}

export interface IStepStarted extends IEventBase {
  kind: 'step_started';
  step: number;
}

export interface ITextDelta extends IEventBase {
  kind: 'text_delta';
  step: number;
  text: string;
}

/** What the model thought before it answered, as it arrived (merged per step in a saved transcript). */
export interface IThinkingDelta extends IEventBase {
  kind: 'thinking_delta';
  step: number;
  text: string;
}

export interface IToolCall extends IEventBase {
  kind: 'tool_call';
  step: number;
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The arguments as the model wrote them, when they could not be read (the call was not run). */
  raw_arguments: string | null;
}

export interface IConfirmationAsked extends IEventBase {
  kind: 'confirmation_asked';
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  sensitivity: string;
  preview: string | null;
  reasons: string[];
}

export interface IConfirmationAnswered extends IEventBase {
  kind: 'confirmation_answered';
  call_id: string;
  tool: string;
  decision: string;
  reason: string;
}

/** One hook run reported with a tool result. */
export interface IHookResult {
  name: string;
  event: string;
  passed: boolean;
  exit_code: number | null;
  /** Why it counts as failed ("FAILED (exit 1)", "TIMED OUT …"), or ''. */
  warning: string;
  output: string;
  duration_s: number | null;
}

export interface IToolResult extends IEventBase {
  kind: 'tool_result';
  step: number;
  call_id: string;
  tool: string;
  status: string;
  success: boolean;
  output: string;
  error: string | null;
  diff: string | null;
  hooks: IHookResult[];
  duration_s: number;
  images: IToolImage[];
  /** For commands: whether it ran in the OS sandbox; null for other tools. */
  sandboxed: boolean | null;
  /** The workspace paths this call changed (from the snapshots taken around it). */
  changed_files: string[];
  /** The person's variables this call changed (run_python, run_cell); empty for other tools. */
  changed_state: IStateChange[];
}

/** How a call changed one of the person's variables. */
export type StateChangeKind = 'added' | 'rebound' | 'mutated' | 'deleted';

/**
 * One of the person's variables a call changed (`StateChange` in
 * architect_nb/tools/state_snapshot.py): `before` and `after` are short
 * descriptions ("DataFrame 3×2 [a:int64, b:float64]"); `restorable` is false
 * when undo cannot put it back, and `why` then says why.
 */
export interface IStateChange {
  name: string;
  kind: StateChangeKind;
  before: string;
  after: string;
  restorable: boolean;
  why: string;
}

/**
 * The review's entry for the person's variables, beside the files (`KERNEL_ENTRY`
 * in architect_nb/tools/state_snapshot.py): its diff is plain lines, not a unified diff.
 */
export const KERNEL_ENTRY = '/kernel';

/** A PNG a tool made (a plot from run_python): base64 data and a text description. */
export interface IToolImage {
  mime: string;
  data: string;
  alt: string;
}

export interface ICostUpdate extends IEventBase {
  kind: 'cost';
  step: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  total_tokens: number;
  total_cost_usd: number;
  priced: boolean;
  /** Of prompt_tokens, read from the provider's prompt cache (0 in older transcripts). */
  cached_tokens: number;
  total_cached_tokens: number;
  /** Of completion_tokens, spent thinking (0 in older transcripts). */
  reasoning_tokens: number;
  total_reasoning_tokens: number;
}

export interface IRunWarning extends IEventBase {
  kind: 'warning';
  message: string;
  category: string;
}

/** What a review's row says about a file the run changed. */
export type ChangeStatus = 'added' | 'deleted' | 'modified';

/** A file the run changed, for review after the run: its status and its diff (capped by the kernel). */
export interface IFileChange {
  path: string;
  status: ChangeStatus;
  diff: string;
}

export interface IRunFinished extends IEventBase {
  kind: 'run_finished';
  status: string;
  stop_reason: string;
  message: string;
  steps: number;
  final_text: string;
  files_changed: string[];
  total_tokens: number;
  total_cost_usd: number;
  duration_s: number;
  /** What undo does not cover (files over the size limit, calls with no snapshot), or ''. */
  undo_note: string;
  /** Every file the run changed, with its diff: the review list. Empty from older kernels. */
  changes: IFileChange[];
  /** Of total_tokens, input read from the provider's prompt cache (0 in older transcripts). */
  total_cached_tokens: number;
  /** Of total_tokens, output the model spent thinking (0 in older transcripts). */
  total_reasoning_tokens: number;
}

/** The context by part (tokens) against the model's window, for one request. */
export interface IContextMeter {
  parts: Record<string, number>;
  window: number;
  /** What compression removed just before this request, or ''. */
  compressed: string;
}

/** What the model was sent at a step: how many messages, how many new (the whole is in the transcript). */
export interface IModelRequest extends IEventBase {
  kind: 'model_request';
  step: number;
  messages: number;
  newMessages: number;
  meter: IContextMeter | null;
}

/** The model's raw reply at a step (in a whole transcript; the notebook drops it). The inspector reads it
 * from the kernel, so the timeline keeps only its finish reason. */
export interface IModelReply extends IEventBase {
  kind: 'model_reply';
  step: number;
  finish_reason: string;
}

export type RunEvent =
  | IModelRequest
  | IModelReply
  | IRunStarted
  | IStepStarted
  | ITextDelta
  | IThinkingDelta
  | IToolCall
  | IConfirmationAsked
  | IConfirmationAnswered
  | IToolResult
  | ICostUpdate
  | IRunWarning
  | IRunFinished;

export interface IRunPayload {
  version: number;
  run_id: string;
  events: RunEvent[];
}

/** The payload is not a run transcript this renderer can show. */
export class PayloadError extends Error {}

type Raw = Record<string, unknown>;

function isRecord(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(raw: Raw, key: string, fallback = ''): string {
  const value = raw[key];
  return typeof value === 'string' ? value : fallback;
}

function optStr(raw: Raw, key: string): string | null {
  const value = raw[key];
  return typeof value === 'string' ? value : null;
}

function num(raw: Raw, key: string, fallback = 0): number {
  const value = raw[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function optNum(raw: Raw, key: string): number | null {
  const value = raw[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function bool(raw: Raw, key: string, fallback = false): boolean {
  const value = raw[key];
  return typeof value === 'boolean' ? value : fallback;
}

function strList(raw: Raw, key: string): string[] {
  const value = raw[key];
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : [];
}

function record(raw: Raw, key: string): Record<string, unknown> {
  const value = raw[key];
  return isRecord(value) ? value : {};
}

function parseThread(raw: unknown): IThreadInfo | null {
  if (!isRecord(raw) || str(raw, 'name') === '') {
    return null;
  }
  return {
    name: str(raw, 'name'),
    id: str(raw, 'id'),
    follows_run: optStr(raw, 'follows_run'),
    forked_from: optStr(raw, 'forked_from'),
    runs: num(raw, 'runs'),
    turns: num(raw, 'turns'),
    context_tokens: num(raw, 'context_tokens'),
    cost_usd: num(raw, 'cost_usd')
  };
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Only plain base64 PNG becomes an image; anything else is dropped. */
function parseImage(raw: unknown): IToolImage | null {
  if (!isRecord(raw)) {
    return null;
  }
  const data = str(raw, 'data');
  if (str(raw, 'mime') !== 'image/png' || !BASE64.test(data)) {
    return null;
  }
  return { mime: 'image/png', data, alt: str(raw, 'alt', 'image') };
}

const CHANGE_STATUSES: readonly ChangeStatus[] = [
  'added',
  'deleted',
  'modified'
];

/** A review entry; one without a path, or with an unknown status, is dropped. */
function parseChange(raw: unknown): IFileChange | null {
  if (!isRecord(raw)) {
    return null;
  }
  const path = str(raw, 'path');
  const status = CHANGE_STATUSES.find(known => known === raw.status);
  if (path === '' || status === undefined) {
    return null;
  }
  return { path, status, diff: str(raw, 'diff') };
}

const STATE_CHANGE_KINDS: readonly StateChangeKind[] = [
  'added',
  'rebound',
  'mutated',
  'deleted'
];

/** A changed variable; one without a name, or with an unknown kind, is dropped. */
function parseStateChange(raw: unknown): IStateChange | null {
  if (!isRecord(raw)) {
    return null;
  }
  const name = str(raw, 'name');
  const kind = STATE_CHANGE_KINDS.find(known => known === raw.kind);
  if (name === '' || kind === undefined) {
    return null;
  }
  return {
    name,
    kind,
    before: str(raw, 'before'),
    after: str(raw, 'after'),
    // Missing reads as restorable, as in the Python renderer; only false says undo cannot restore it.
    restorable: bool(raw, 'restorable', true),
    why: str(raw, 'why')
  };
}

function parseHook(raw: unknown): IHookResult | null {
  if (!isRecord(raw)) {
    return null;
  }
  const exitCode = optNum(raw, 'exit_code');
  const passed = typeof raw.passed === 'boolean' ? raw.passed : exitCode === 0;
  return {
    name: str(raw, 'name', 'hook'),
    event: str(raw, 'event'),
    passed,
    exit_code: exitCode,
    warning: str(raw, 'warning'),
    output: str(raw, 'output'),
    duration_s: optNum(raw, 'duration_s') ?? optNum(raw, 'duration')
  };
}

/** The parts a meter may hold; others are ignored, negative or odd counts read as 0. */
export const METER_PARTS: readonly (readonly [string, string])[] = [
  ['system', 'system prompt'],
  ['tools', 'tool schemas'],
  ['earlier', 'earlier cells'],
  ['messages', 'this run'],
  ['tool_results', 'tool results']
];

function parseMeter(raw: unknown): IContextMeter | null {
  if (!isRecord(raw) || !isRecord(raw.parts)) {
    return null;
  }
  const given = raw.parts;
  const parts: Record<string, number> = {};
  for (const [key] of METER_PARTS) {
    parts[key] = Math.max(0, num(given, key));
  }
  return {
    parts,
    window: Math.max(0, num(raw, 'window')),
    compressed: str(raw, 'compressed')
  };
}

/** Turn one raw event into a typed one, or null when its kind is unknown. */
export function parseEvent(raw: unknown): RunEvent | null {
  if (!isRecord(raw)) {
    return null;
  }
  const base = { run_id: str(raw, 'run_id'), at: num(raw, 'at') };
  const kind = str(raw, 'kind');
  switch (kind) {
    case 'run_started':
      return {
        ...base,
        kind,
        task: str(raw, 'task'),
        agent: str(raw, 'agent'),
        model: str(raw, 'model'),
        mode: str(raw, 'mode'),
        dry_run: bool(raw, 'dry_run'),
        workspace: str(raw, 'workspace'),
        tools: strList(raw, 'tools'),
        thread: parseThread(raw.thread),
        instructions: strList(raw, 'instructions'),
        todo: strList(raw, 'todo')
      };
    case 'step_started':
      return { ...base, kind, step: num(raw, 'step') };
    case 'text_delta':
    case 'thinking_delta':
      return { ...base, kind, step: num(raw, 'step'), text: str(raw, 'text') };
    case 'tool_call':
      return {
        ...base,
        kind,
        step: num(raw, 'step'),
        call_id: str(raw, 'call_id'),
        tool: str(raw, 'tool'),
        arguments: record(raw, 'arguments'),
        raw_arguments: optStr(raw, 'raw_arguments')
      };
    case 'confirmation_asked':
      return {
        ...base,
        kind,
        call_id: str(raw, 'call_id'),
        tool: str(raw, 'tool'),
        arguments: record(raw, 'arguments'),
        sensitivity: str(raw, 'sensitivity'),
        preview: optStr(raw, 'preview'),
        reasons: strList(raw, 'reasons')
      };
    case 'confirmation_answered':
      return {
        ...base,
        kind,
        call_id: str(raw, 'call_id'),
        tool: str(raw, 'tool'),
        decision: str(raw, 'decision'),
        reason: str(raw, 'reason')
      };
    case 'tool_result': {
      const hooks = Array.isArray(raw.hooks) ? raw.hooks : [];
      return {
        ...base,
        kind,
        step: num(raw, 'step'),
        call_id: str(raw, 'call_id'),
        tool: str(raw, 'tool'),
        status: str(raw, 'status', 'ok'),
        success: bool(raw, 'success', true),
        output: str(raw, 'output'),
        error: optStr(raw, 'error'),
        diff: optStr(raw, 'diff'),
        hooks: hooks
          .map(parseHook)
          .filter((hook): hook is IHookResult => hook !== null),
        duration_s: num(raw, 'duration_s'),
        images: (Array.isArray(raw.images) ? raw.images : [])
          .map(parseImage)
          .filter((image): image is IToolImage => image !== null),
        sandboxed: typeof raw.sandboxed === 'boolean' ? raw.sandboxed : null,
        changed_files: strList(raw, 'changed_files'),
        changed_state: (Array.isArray(raw.changed_state)
          ? raw.changed_state
          : []
        )
          .map(parseStateChange)
          .filter((change): change is IStateChange => change !== null)
      };
    }
    case 'cost':
      return {
        ...base,
        kind,
        step: num(raw, 'step'),
        prompt_tokens: num(raw, 'prompt_tokens'),
        completion_tokens: num(raw, 'completion_tokens'),
        cost_usd: num(raw, 'cost_usd'),
        total_tokens: num(raw, 'total_tokens'),
        total_cost_usd: num(raw, 'total_cost_usd'),
        priced: bool(raw, 'priced'),
        cached_tokens: num(raw, 'cached_tokens'),
        total_cached_tokens: num(raw, 'total_cached_tokens'),
        reasoning_tokens: num(raw, 'reasoning_tokens'),
        total_reasoning_tokens: num(raw, 'total_reasoning_tokens')
      };
    case 'model_request': {
      // The notebook keeps { messages, new }; a whole transcript has { keep, add, messages }.
      const request = record(raw, 'request');
      const messages = num(request, 'messages');
      const added = Array.isArray(request.add) ? request.add.length : messages;
      const fresh =
        optNum(request, 'new') ?? (num(request, 'keep') > 0 ? added : messages);
      return {
        ...base,
        kind,
        step: num(raw, 'step'),
        messages,
        newMessages: fresh,
        meter: parseMeter(raw.meter)
      };
    }
    case 'model_reply':
      return {
        ...base,
        kind,
        step: num(raw, 'step'),
        finish_reason: str(raw, 'finish_reason')
      };
    case 'warning':
      return {
        ...base,
        kind,
        message: str(raw, 'message'),
        category: str(raw, 'category', 'general')
      };
    case 'run_finished':
      return {
        ...base,
        kind,
        status: str(raw, 'status'),
        stop_reason: str(raw, 'stop_reason'),
        message: str(raw, 'message'),
        steps: num(raw, 'steps'),
        final_text: str(raw, 'final_text'),
        files_changed: strList(raw, 'files_changed'),
        total_tokens: num(raw, 'total_tokens'),
        total_cost_usd: num(raw, 'total_cost_usd'),
        duration_s: num(raw, 'duration_s'),
        undo_note: str(raw, 'undo_note'),
        changes: (Array.isArray(raw.changes) ? raw.changes : [])
          .map(parseChange)
          .filter((change): change is IFileChange => change !== null),
        total_cached_tokens: num(raw, 'total_cached_tokens'),
        total_reasoning_tokens: num(raw, 'total_reasoning_tokens')
      };
    default:
      return null;
  }
}

/** Check and type a payload; throws `PayloadError` saying what is wrong. */
export function parsePayload(data: unknown): IRunPayload {
  if (!isRecord(data)) {
    throw new PayloadError('The run transcript is not a JSON object.');
  }
  const version = num(data, 'version', -1);
  if (version !== SUPPORTED_VERSION) {
    throw new PayloadError(
      `Transcript version ${String(data.version)} is not supported (expected ${SUPPORTED_VERSION}); upgrade architect-nb's JupyterLab extension.`
    );
  }
  if (!Array.isArray(data.events)) {
    throw new PayloadError('The run transcript has no "events" list.');
  }
  const events = data.events
    .map(parseEvent)
    .filter((event): event is RunEvent => event !== null);
  return { version, run_id: str(data, 'run_id'), events };
}
