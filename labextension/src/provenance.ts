/**
 * Provenance marks: in a notebook cell's editor, a mark in the gutter beside
 * each line the agent wrote that is unchanged since.
 *
 * The kernel keeps a record in the cell's metadata
 * (`metadata.architect.provenance`, made by `architect_nb/provenance/record.py`):
 * a short hash of every line as the agent left it and which run wrote it
 * (null: the person). A line now counts as the agent's when aligning the
 * hashes of the lines now against the recorded ones matches it to a recorded
 * line of a run. The alignment is Python's `difflib.SequenceMatcher` (no
 * junk) redone here, so the marks agree with what the kernel and
 * `python -m architect_nb provenance` report.
 *
 * Hashing is `@noble/hashes`' synchronous SHA-256 rather than `crypto.subtle`:
 * that is missing on pages served over plain http from anywhere but localhost
 * (a classroom server), and it is asynchronous (a result could arrive after
 * newer typing). The bytes hashed are this module's own UTF-8, which encodes
 * lone surrogates as Python's `surrogatepass` does (`TextEncoder` replaces
 * them). Lines are short and their hashes are cached, so the cost is small.
 *
 * A record that is not one of ours never throws: the cell gets no marks and
 * the console one warning.
 */

import {
  EditorState,
  Extension,
  Facet,
  RangeSet,
  RangeSetBuilder,
  StateEffect,
  StateField
} from '@codemirror/state';
import {
  EditorView,
  gutter,
  GutterMarker,
  ViewPlugin,
  ViewUpdate
} from '@codemirror/view';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

// ------------------------------------------------------------------ UTF-8

/** UTF-8 as Python's `str.encode('utf-8', 'surrogatepass')`: a lone surrogate is encoded, not replaced. */
export function utf8(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) {
      out.push(c);
    } else if (c < 0x800) {
      out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    } else if (c < 0x10000) {
      out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    } else {
      out.push(
        0xf0 | (c >> 18),
        0x80 | ((c >> 12) & 63),
        0x80 | ((c >> 6) & 63),
        0x80 | (c & 63)
      );
    }
  }
  return Uint8Array.from(out);
}

// ------------------------------------------------------------------ lines and their hashes

// Where Python's str.splitlines() breaks a line: \n \r \v \f \x1c \x1d \x1e \x85 \u2028 \u2029 (and \r\n).
const BREAKS = new Set([
  0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029
]);

/** The lines of `text` as Python's `text.splitlines(keepends=True)`: each with its start offset. */
export function splitLines(text: string): { text: string; from: number }[] {
  const lines: { text: string; from: number }[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!BREAKS.has(c)) {
      continue;
    }
    if (c === 0x0d && text.charCodeAt(i + 1) === 0x0a) {
      i++;
    }
    lines.push({ text: text.slice(from, i + 1), from });
    from = i + 1;
  }
  if (from < text.length) {
    lines.push({ text: text.slice(from), from });
  }
  return lines;
}

const hashes = new Map<string, string>();

/** A line's short hash as the kernel's `line_hash`: its text without trailing \r and \n, 8 hex digits. */
export function lineHash(line: string): string {
  const text = line.replace(/[\r\n]+$/, '');
  let hash = hashes.get(text);
  if (hash === undefined) {
    hash = bytesToHex(sha256(utf8(text))).slice(0, 8);
    if (hashes.size >= 20000) {
      hashes.clear(); // a bound, not an LRU: a cell's lines are hashed again at most once
    }
    hashes.set(text, hash);
  }
  return hash;
}

// ------------------------------------------------------------------ the record

export interface IRun {
  run: string;
  model: string;
  at: string;
}

/** A record that passed the kernel's checks (`_checked` in `provenance/record.py`). */
export interface IRecord {
  runs: IRun[];
  lines: [string, number | null][];
}

const MAX_RUNS = 200;
const MAX_LINES = 200_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The provenance record in a cell's `metadata.architect`: null when there is
 * none, a string saying what is wrong when it is not one of ours.
 */
export function readRecord(architect: unknown): IRecord | string | null {
  if (architect === undefined || architect === null) {
    return null;
  }
  if (!isObject(architect)) {
    return 'metadata.architect is not an object';
  }
  const record = architect.provenance;
  if (record === undefined) {
    return null;
  }
  if (!isObject(record)) {
    return 'the record is not an object';
  }
  if (record.v !== 1) {
    return `unknown record version ${JSON.stringify(record.v)}`;
  }
  const { runs, lines, hash } = record;
  if (
    !Array.isArray(runs) ||
    runs.length > MAX_RUNS ||
    !runs.every(
      run =>
        isObject(run) &&
        ['run', 'model', 'at'].every(key => typeof run[key] === 'string')
    )
  ) {
    return 'its runs are not a list of {run, model, at}';
  }
  if (!Array.isArray(lines) || lines.length > MAX_LINES) {
    return 'its lines are not a list';
  }
  if (typeof hash !== 'string' || hash.length !== 16) {
    return 'its hash is missing';
  }
  const checked: [string, number | null][] = [];
  for (const item of lines) {
    if (
      !Array.isArray(item) ||
      item.length !== 2 ||
      typeof item[0] !== 'string' ||
      !/^[0-9a-f]{8}$/.test(item[0])
    ) {
      return 'a line entry is not [hash, run]';
    }
    const who: unknown = item[1];
    if (
      who !== null &&
      !(
        Number.isInteger(who) &&
        (who as number) >= 0 &&
        (who as number) < runs.length
      )
    ) {
      return `a line names run ${JSON.stringify(who)}, which the record does not have`;
    }
    checked.push([item[0], who as number | null]);
  }
  return {
    runs: runs.map(run => ({
      run: run.run as string,
      model: run.model as string,
      at: run.at as string
    })),
    lines: checked
  };
}

// ------------------------------------------------------------------ the alignment

/** A run of equal items: a[i, i + size) equals b[j, j + size). */
export type Block = [i: number, j: number, size: number];

/** How many inner steps an alignment may take before it settles for the unchanged start and end. */
export const MAX_STEPS = 500_000;

/**
 * The matching blocks of Python's `SequenceMatcher(None, a, b, autojunk=False)`,
 * sorted; null when that would take more than `budget` steps (a huge cell of
 * repeated lines).
 */
export function matchingBlocks(
  a: readonly string[],
  b: readonly string[],
  budget = MAX_STEPS
): Block[] | null {
  const b2j = new Map<string, number[]>();
  b.forEach((item, j) => {
    const at = b2j.get(item);
    if (at === undefined) {
      b2j.set(item, [j]);
    } else {
      at.push(j);
    }
  });
  let steps = 0;
  let before = new Int32Array(b.length + 1);
  let row = new Int32Array(b.length + 1);
  let beforeSet: number[] = [];
  let rowSet: number[] = [];
  const clear = (lengths: Int32Array, set: number[]) => {
    for (const at of set) {
      lengths[at] = 0;
    }
    set.length = 0;
  };
  // SequenceMatcher.find_longest_match: the longest equal run in a[alo, ahi) x b[blo, bhi),
  // the earliest in a, then in b, on a tie; null once over the budget.
  const longest = (
    alo: number,
    ahi: number,
    blo: number,
    bhi: number
  ): Block | null => {
    let best: Block = [alo, blo, 0];
    // Python keeps a dict j -> length of the run ending at (i - 1, j); here two rows of an array
    // (the run ending at j is at j + 1), and the places each row set, to clear them again.
    for (let i = alo; i < ahi; i++) {
      for (const j of b2j.get(a[i]) ?? []) {
        if (++steps > budget) {
          clear(before, beforeSet);
          clear(row, rowSet);
          return null;
        }
        if (j < blo) {
          continue;
        }
        if (j >= bhi) {
          break;
        }
        const k = before[j] + 1;
        row[j + 1] = k;
        rowSet.push(j + 1);
        if (k > best[2]) {
          best = [i - k + 1, j - k + 1, k];
        }
      }
      clear(before, beforeSet);
      [before, row] = [row, before];
      [beforeSet, rowSet] = [rowSet, beforeSet];
    }
    clear(before, beforeSet);
    return best;
  };
  const blocks: Block[] = [];
  // As get_matching_blocks: a stack of the ranges left to match, either side of each match.
  const queue: [number, number, number, number][] = [
    [0, a.length, 0, b.length]
  ];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const found = longest(alo, ahi, blo, bhi);
    if (found === null) {
      return null;
    }
    const [i, j, k] = found;
    if (k > 0) {
      blocks.push([i, j, k]);
      if (alo < i && blo < j) {
        queue.push([alo, i, blo, j]);
      }
      if (i + k < ahi && j + k < bhi) {
        queue.push([i + k, ahi, j + k, bhi]);
      }
    }
  }
  return blocks.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
}

/** The cheap alignment for huge cells: only the unchanged lines at the start and at the end. */
function endsAlike(a: readonly string[], b: readonly string[]): Block[] {
  const limit = Math.min(a.length, b.length);
  let head = 0;
  while (head < limit && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < limit - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  return [
    [0, 0, head],
    [a.length - tail, b.length - tail, tail]
  ];
}

/** One line of the text now: where it starts, and the run that wrote it (null: the person). */
export interface ILineAuthor {
  from: number;
  run: number | null;
}

export interface IAttribution {
  lines: ILineAuthor[];
  runs: IRun[];
  /** Why the record was not used (it is not one of ours); null when it was, or there is none. */
  problem: string | null;
}

/** Who wrote each line of `text`, by the cell's `metadata.architect`; never throws. */
export function attribute(text: string, architect: unknown): IAttribution {
  const now = splitLines(text);
  const people = (problem: string | null): IAttribution => ({
    lines: now.map(line => ({ from: line.from, run: null })),
    runs: [],
    problem
  });
  let record: IRecord | string | null;
  try {
    record = readRecord(architect);
  } catch (error) {
    record = `it could not be read (${String(error)})`;
  }
  if (record === null || typeof record === 'string') {
    return people(record);
  }
  if (now.length > MAX_LINES) {
    return people(null);
  }
  const recorded = record.lines.map(([hash]) => hash);
  const current = now.map(line => lineHash(line.text));
  const blocks =
    matchingBlocks(recorded, current) ?? endsAlike(recorded, current);
  const lines = now.map(
    line => ({ from: line.from, run: null }) as ILineAuthor
  );
  for (const [i, j, size] of blocks) {
    for (let t = 0; t < size; t++) {
      lines[j + t].run = record.lines[i + t][1];
    }
  }
  return { lines, runs: record.runs, problem: null };
}

// ------------------------------------------------------------------ the editor's gutter

/** What a mark's tooltip says about its line. */
export function markTitle(run: IRun): string {
  const id = run.run.length > 8 ? `${run.run.slice(0, 8)}…` : run.run;
  const when = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(run.at);
  const at = when ? `, ${when[1]} ${when[2]} UTC` : '';
  return `Written by the agent (run ${id}, ${run.model}${at}); unchanged since`;
}

/** The mark of one line: the tooltip, the run's id, and the line's text when it was marked. */
export class AgentMark extends GutterMarker {
  constructor(
    readonly title: string,
    readonly run: string,
    readonly text: string
  ) {
    super();
  }

  eq(other: GutterMarker): boolean {
    return (
      other instanceof AgentMark &&
      other.title === this.title &&
      other.run === this.run &&
      other.text === this.text
    );
  }

  toDOM(): Node {
    const node = document.createElement('div');
    node.className = 'anb-provenance-mark';
    node.title = this.title;
    node.dataset.run = this.run;
    return node;
  }
}

/**
 * The marks of the editor's lines. A line of the editor holds more than one
 * line of Python's when it has a break only Python sees (\f, \u2028, ...): it is
 * marked when they all are the agent's.
 */
export function marksFor(
  state: EditorState,
  found: IAttribution
): RangeSet<AgentMark> {
  const builder = new RangeSetBuilder<AgentMark>();
  const doc = state.doc;
  let pending: { from: number; number: number; mark: AgentMark | null } | null =
    null;
  const flush = () => {
    if (pending?.mark) {
      builder.add(pending.from, pending.from, pending.mark);
    }
  };
  for (const line of found.lines) {
    const at = doc.lineAt(Math.min(line.from, doc.length));
    const run = line.run === null ? null : found.runs[line.run];
    if (pending !== null && pending.number === at.number) {
      if (run === null) {
        pending.mark = null;
      }
      continue;
    }
    flush();
    pending = {
      from: at.from,
      number: at.number,
      mark: run ? new AgentMark(markTitle(run), run.run, at.text) : null
    };
  }
  flush();
  return builder.finish();
}

/** A cell's model as the editor extension needs it: its metadata, and when it changes. */
export interface ICellMetadata {
  getMetadata(key: string): unknown;
  readonly metadataChanged: {
    connect(slot: (sender: unknown, change: unknown) => void): boolean;
    disconnect(slot: (sender: unknown, change: unknown) => void): boolean;
  };
}

/** The cell behind an editor's model (JupyterLab's shared cell), or null for other editors. */
export function cellOf(model: unknown): ICellMetadata | null {
  const shared = isObject(model)
    ? (model as { sharedModel?: unknown }).sharedModel
    : undefined;
  if (typeof shared !== 'object' || shared === null) {
    return null;
  }
  const cell = shared as Partial<ICellMetadata>;
  return typeof cell.getMetadata === 'function' &&
    typeof cell.metadataChanged?.connect === 'function'
    ? (cell as ICellMetadata)
    : null;
}

const setMarks = StateEffect.define<RangeSet<AgentMark>>();

/** How an editor works out its marks from its state (each cell's editor has its own cell). */
const computeMarks = Facet.define<
  (state: EditorState) => RangeSet<AgentMark>,
  ((state: EditorState) => RangeSet<AgentMark>) | null
>({ combine: values => values[0] ?? null });

/**
 * The marks of an editor: worked out when the editor opens, moved with the
 * text as it is typed (a line whose text a change made different loses its
 * mark at once), and replaced when they are worked out again.
 */
const marksField = StateField.define<RangeSet<AgentMark>>({
  create: state => state.facet(computeMarks)?.(state) ?? RangeSet.empty,
  update(value, tr) {
    for (const effect of tr.effects) {
      if (effect.is(setMarks)) {
        return effect.value;
      }
    }
    if (!tr.docChanged || value.size === 0) {
      return value;
    }
    // The recompute after the pause has the last word (it also finds lines that are the agent's
    // again, after an undo).
    const doc = tr.state.doc;
    const touched: [number, number][] = [];
    tr.changes.iterChangedRanges((_fromA, _toA, fromB, toB) => {
      touched.push([doc.lineAt(fromB).from, doc.lineAt(toB).to]);
    });
    return value.map(tr.changes).update({
      filter: (from, _to, mark) =>
        !touched.some(([lo, hi]) => from >= lo && from <= hi) ||
        doc.lineAt(from).text === mark.text
    });
  }
});

/** The editor's marked lines now (1-based) with their tooltips. */
export function markedLines(
  state: EditorState
): { line: number; title: string }[] {
  const marked: { line: number; title: string }[] = [];
  const marks = state.field(marksField, false);
  if (marks !== undefined) {
    for (const cursor = marks.iter(); cursor.value !== null; cursor.next()) {
      marked.push({
        line: state.doc.lineAt(cursor.from).number,
        title: cursor.value.title
      });
    }
  }
  return marked;
}

/** How long typing must pause before the marks are worked out again. */
export const RECOMPUTE_MS = 200;

/**
 * The editor extension for one cell: its marks (`marksField`), worked out
 * again by a plugin when typing pauses and when the cell's metadata changes,
 * and the gutter that shows them.
 */
export function provenanceExtension(
  cell: ICellMetadata,
  delay = RECOMPUTE_MS
): Extension {
  let warned: string | null = null;
  const compute = (state: EditorState): RangeSet<AgentMark> => {
    const found = attribute(
      state.doc.toString(),
      cell.getMetadata('architect')
    );
    if (found.problem !== null && found.problem !== warned) {
      console.warn(
        `architect-nb: a cell's provenance record is not used: ${found.problem}`
      );
    }
    warned = found.problem;
    return marksFor(state, found);
  };

  const recompute = ViewPlugin.define(view => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const run = () => {
      timer = null;
      const next = compute(view.state);
      if (!RangeSet.eq([view.state.field(marksField)], [next])) {
        view.dispatch({ effects: setMarks.of(next) });
      }
    };
    const schedule = () => {
      if (timer !== null) {
        clearTimeout(timer);
      }
      timer = setTimeout(run, delay);
    };
    const onMetadata = (_sender: unknown, change: unknown) => {
      const key = isObject(change) ? change.key : undefined;
      if (key === undefined || key === 'architect') {
        schedule();
      }
    };
    cell.metadataChanged.connect(onMetadata);
    return {
      update(update: ViewUpdate) {
        if (update.docChanged) {
          schedule();
        }
      },
      destroy() {
        if (timer !== null) {
          clearTimeout(timer);
        }
        cell.metadataChanged.disconnect(onMetadata);
      }
    };
  });

  return [
    computeMarks.of(compute),
    marksField,
    recompute,
    gutter({
      class: 'anb-provenance-gutter',
      markers: (view: EditorView) => view.state.field(marksField)
    })
  ];
}
