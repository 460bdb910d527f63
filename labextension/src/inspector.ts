/**
 * The inspector in the run timeline: each step opens to what the model was
 * sent (messages, the new ones marked; the tool schemas) and what it answered
 * (text, calls with their arguments as written, thinking, usage). The data is
 * fetched from the kernel when the step's "What the model saw" is opened
 * (`%architect inspect RUN:STEP`, through the `IUndoRunner`), so the saved
 * notebook keeps only the compact form. Everything is set as text, never as
 * HTML: the transcript may come from a hostile notebook.
 */

import { h } from './dom';
import type { IContextMeter } from './types';
import { METER_PARTS } from './types';

/** The mime type of `%architect inspect`'s JSON. */
export const INSPECT_MIME_TYPE = 'application/vnd.architect-nb.inspect+json';

/** What the kernel gave for one step, or why not. */
export interface IInspection {
  ok: boolean;
  message: string;
  data: unknown;
}

type Raw = Record<string, unknown>;

function isRecord(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (value === null || value === undefined) {
    return '';
  }
  return JSON.stringify(value, null, 1);
}

function num(raw: Raw, key: string): number {
  const value = raw[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** "context 3,400 tokens of 128,000 (3%): system prompt 900 · tool schemas 2,400 · ..." */
export function meterText(meter: IContextMeter | null): string {
  if (meter === null) {
    return '';
  }
  const total = METER_PARTS.reduce(
    (sum, [key]) => sum + (meter.parts[key] ?? 0),
    0
  );
  const share =
    meter.window > 0
      ? ` of ${meter.window.toLocaleString('en-US')} (${Math.round((100 * total) / meter.window)}%)`
      : '';
  const parts = METER_PARTS.map(
    ([key, name]) =>
      `${name} ${(meter.parts[key] ?? 0).toLocaleString('en-US')}`
  ).join(' · ');
  return `context ${total.toLocaleString('en-US')} tokens${share}: ${parts}`;
}

function content(message: Raw): string {
  const value = message.content;
  if (Array.isArray(value)) {
    return value
      .map(part =>
        isRecord(part)
          ? part.type === 'image_url'
            ? '[image]'
            : text(part.text)
          : ''
      )
      .join('\n');
  }
  return text(value);
}

function renderMessage(index: number, message: unknown, fresh: boolean) {
  const raw = isRecord(message) ? message : {};
  const node = h(
    'div',
    `anb-inspect-message${fresh ? ' anb-inspect-new' : ''}`,
    h(
      'div',
      'anb-inspect-role',
      `${index}. ${text(raw.role) || '?'}`,
      fresh ? h('span', 'anb-badge anb-badge-ok', 'new') : null
    )
  );
  node.dataset.role = text(raw.role);
  const body = content(raw);
  if (body) {
    node.append(h('pre', 'anb-pre', body));
  }
  const calls = Array.isArray(raw.tool_calls) ? raw.tool_calls : [];
  for (const call of calls) {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
    node.append(
      h('pre', 'anb-pre', `→ ${text(fn.name)}(${text(fn.arguments)})`)
    );
  }
  return node;
}

function renderReply(reply: unknown): HTMLElement {
  if (!isRecord(reply)) {
    return h('div', 'anb-muted', 'No reply recorded.');
  }
  const node = h('div', 'anb-inspect-reply');
  if (reply.thinking) {
    node.append(
      h('div', 'anb-muted', 'thinking'),
      h('pre', 'anb-pre', text(reply.thinking))
    );
  }
  if (reply.content) {
    node.append(
      h('div', 'anb-muted', 'text'),
      h('pre', 'anb-pre', text(reply.content))
    );
  }
  for (const call of Array.isArray(reply.tool_calls) ? reply.tool_calls : []) {
    const raw = isRecord(call) ? call : {};
    node.append(
      h(
        'div',
        'anb-muted',
        `call ${text(raw.name)}, its arguments as written:`
      ),
      h('pre', 'anb-pre anb-inspect-raw-args', text(raw.arguments))
    );
  }
  const usage = isRecord(reply.usage) ? reply.usage : {};
  node.append(
    h(
      'div',
      'anb-muted anb-inspect-usage',
      `${num(usage, 'input_tokens').toLocaleString('en-US')} input (${num(usage, 'cached_tokens').toLocaleString('en-US')} cached) · ` +
        `${num(usage, 'output_tokens').toLocaleString('en-US')} output · ` +
        (usage.priced === true
          ? `$${num(usage, 'cost_usd').toFixed(4)}`
          : 'not priced')
    )
  );
  return node;
}

/** The inspector's body for one step's data (as `%architect inspect` gives it). */
export function renderInspection(data: unknown): HTMLElement {
  const raw = isRecord(data) ? data : {};
  const messages = Array.isArray(raw.messages) ? raw.messages : [];
  const fresh = new Set(
    (Array.isArray(raw.new) ? raw.new : []).filter(
      (n): n is number => typeof n === 'number'
    )
  );
  const tools = Array.isArray(raw.tools) ? raw.tools : [];
  const names = tools
    .map(tool =>
      isRecord(tool) && isRecord(tool.function) ? text(tool.function.name) : ''
    )
    .join(', ');
  const schemas = h(
    'details',
    'anb-inspect-tools',
    h('summary', '', `Tool schemas (${tools.length}): ${names}`),
    h('pre', 'anb-pre', JSON.stringify(tools, null, 1))
  );
  const request = h(
    'details',
    'anb-inspect-json',
    h('summary', '', 'The request as JSON'),
    h('pre', 'anb-pre', JSON.stringify({ messages, tools }, null, 1))
  );
  return h(
    'div',
    'anb-inspector',
    h(
      'div',
      'anb-inspect-title',
      `The model was sent ${messages.length} messages (${fresh.size} new since the previous request)`
    ),
    ...messages.map((message, i) => renderMessage(i, message, fresh.has(i))),
    schemas,
    request,
    h('div', 'anb-inspect-title', 'What it answered'),
    renderReply(raw.reply)
  );
}
