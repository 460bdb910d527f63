/**
 * Provenance marks: the hash and the alignment give the kernel's answer
 * (`architect_nb/provenance/record.py`; the expected values below were
 * computed with it), and a cell editor marks the agent's lines, follows the
 * person's typing and the cell's metadata, and ignores a malformed record.
 */

import { EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { Signal } from '@lumino/signaling';

import {
  attribute,
  cellOf,
  ICellMetadata,
  lineHash,
  markedLines,
  markTitle,
  matchingBlocks,
  provenanceExtension,
  readRecord,
  RECOMPUTE_MS,
  splitLines,
  utf8
} from '../src/provenance';

const RUN_A = {
  run: '4f2a9c1e-run',
  model: 'gpt-4o-mini',
  at: '1970-01-01T00:00:00Z'
};
const RUN_B = { run: 'b77', model: 'scripted', at: '1970-01-01T00:00:00Z' };

/** `stamped(None, "a = 1\nb = 2\n", None, A)` in the kernel. */
const TWO_LINES = {
  v: 1,
  runs: [RUN_A],
  lines: [
    ['b5bc1ffd', 0],
    ['f74f51ca', 0]
  ],
  hash: 'fe9c2dadb34bee2a'
};

/** Line numbers (1-based) the agent wrote, with their runs, as the kernel's `compare` lists them. */
function agentLines(text: string, record: unknown): [number, number][] {
  const found = attribute(text, { provenance: record });
  expect(found.problem).toBeNull();
  return found.lines.flatMap((line, i) =>
    line.run === null ? [] : [[i + 1, line.run] as [number, number]]
  );
}

describe('the hash', () => {
  it('encodes UTF-8 as Python’s surrogatepass does', () => {
    const bytes = (text: string) => Array.from(utf8(text));
    expect(bytes('aé€')).toEqual([0x61, 0xc3, 0xa9, 0xe2, 0x82, 0xac]);
    expect(bytes('😀')).toEqual([0xf0, 0x9f, 0x98, 0x80]);
    // Lone surrogates are encoded, not replaced (a high one at the end, a low one alone).
    expect(bytes('x\ud800')).toEqual([0x78, 0xed, 0xa0, 0x80]);
    expect(bytes('\udc00y')).toEqual([0xed, 0xb0, 0x80, 0x79]);
  });

  it.each([
    ['x = 1', '8ff436de'],
    ['x = 1\n', '8ff436de'],
    ['x = 1\r\n', '8ff436de'],
    ['', 'e3b0c442'],
    ['    return total  # é', '32a94a30'],
    ['print("😀")', '9b60cb1d'],
    ['\ud800', '91a681b9'], // a lone surrogate, as Python's surrogatepass encodes it
    ['a\u2028b', 'fe2d3b94'],
    ['é'.repeat(40) + ' = 1', '421ab198'] // longer than one SHA-256 block
  ])('hashes %j as line_hash does', (line, hash) => {
    expect(lineHash(line)).toBe(hash);
  });

  it('splits lines where Python’s splitlines does', () => {
    const text = 'a\r\nb\rc\x0bd\x0ce\x1cf\x85g\u2028h\n\ni';
    expect(splitLines(text).map(line => line.text)).toEqual([
      'a\r\n',
      'b\r',
      'c\u000b',
      'd\f',
      'e\u001c',
      'f\u0085',
      'g\u2028',
      'h\n',
      '\n',
      'i'
    ]);
    expect(splitLines('x\ny\n').map(line => line.from)).toEqual([0, 2]);
    expect(splitLines('')).toEqual([]);
  });
});

describe('the alignment', () => {
  it.each([
    [
      'abxcd',
      'abcd',
      [
        [0, 0, 2],
        [3, 2, 2]
      ]
    ],
    [
      'qabxcd',
      'abycdf',
      [
        [1, 0, 2],
        [4, 3, 2]
      ]
    ],
    ['aaabbb', 'bbbaaa', [[0, 3, 3]]],
    [
      'abcabba',
      'cbabac',
      [
        [0, 2, 2],
        [2, 5, 1]
      ]
    ],
    ['xyzzy', 'zyxzy', [[3, 0, 2]]]
  ])('matches %s with %s as SequenceMatcher does', (a, b, blocks) => {
    expect(matchingBlocks([...a], [...b])).toEqual(blocks);
  });

  it('gives up past its budget', () => {
    const blank = Array.from({ length: 300 }, () => '');
    expect(matchingBlocks(blank, blank, 1000)).toBeNull();
    expect(matchingBlocks(blank, blank)).toEqual([[0, 0, 300]]);
  });

  it('keeps the agent’s lines when the person inserts lines above', () => {
    expect(agentLines('# mine\na = 1\nb = 2\n', TWO_LINES)).toEqual([
      [2, 0],
      [3, 0]
    ]);
  });

  it('takes the mark off a line the person edited', () => {
    expect(agentLines('a = 1\nb = 3\n', TWO_LINES)).toEqual([[1, 0]]);
  });

  it('keeps the rest when the person deletes lines', () => {
    const record = {
      v: 1,
      runs: [RUN_A],
      lines: [
        ['ca978112', 0],
        ['3e23e816', 0],
        ['2e7d2c03', 0],
        ['18ac3e73', 0]
      ],
      hash: 'cf2c7f63055d2e84'
    }; // "a\nb\nc\nd\n"
    expect(agentLines('a\nd\n', record)).toEqual([
      [1, 0],
      [2, 0]
    ]);
  });

  it('leaves the person’s recorded lines theirs', () => {
    const record = {
      v: 1,
      runs: [RUN_A],
      lines: [
        ['8ff436de', null],
        ['ea427caa', 0],
        ['9067770c', null]
      ],
      hash: '717a46ed1f746654'
    }; // "x = 1\nz = 0\ny = 2\n", the agent wrote the middle line
    expect(agentLines('x = 1\nz = 0\ny = 2\n', record)).toEqual([[2, 0]]);
  });

  it('gives the kernel’s answer for repeated and moved lines', () => {
    const repeats = {
      v: 1,
      runs: [RUN_A],
      lines: [
        ['ca978112', 0],
        ['e3b0c442', 0],
        ['ca978112', 0],
        ['e3b0c442', 0],
        ['ca978112', 0]
      ],
      hash: '3941c416586b8110'
    }; // "a\n\na\n\na\n"
    expect(agentLines('\na\n\na\n', repeats)).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0]
    ]);
    const twoRuns = {
      v: 1,
      runs: [RUN_A, RUN_B],
      lines: [
        ['b5bc1ffd', 0],
        ['f74f51ca', 0],
        ['46c7044c', 1]
      ],
      hash: '9e85b40cfd7b344f'
    }; // "a = 1\nb = 2\nc = 3\n"; the person moved c above b: SequenceMatcher keeps b, not c
    expect(agentLines('a = 1\nc = 3\nb = 2\n', twoRuns)).toEqual([
      [1, 0],
      [3, 0]
    ]);
  });

  it('settles for the unchanged start and end of a huge cell of repeated lines', () => {
    const line = 'x = 1';
    const record = {
      v: 1,
      runs: [RUN_A],
      lines: Array.from({ length: 800 }, () => [lineHash(line), 0]),
      hash: '0123456789abcdef'
    };
    const lines = Array.from({ length: 800 }, () => line);
    lines[399] = 'x = 2';
    const marked = agentLines(lines.join('\n'), record).map(([n]) => n);
    expect(marked).toHaveLength(799);
    expect(marked).not.toContain(400);
  });

  const good = TWO_LINES;
  it.each([
    ['architect that is a list', []],
    ['a record that is a string', { provenance: 'yes' }],
    ['another version', { provenance: { ...good, v: 2 } }],
    ['runs that are not a list', { provenance: { ...good, runs: {} } }],
    [
      'a run without a model',
      { provenance: { ...good, runs: [{ run: 'r', at: 'now' }] } }
    ],
    ['lines that are not a list', { provenance: { ...good, lines: 'a' } }],
    ['no hash', { provenance: { ...good, hash: undefined } }],
    [
      'a line hash of capitals',
      { provenance: { ...good, lines: [['B5BC1FFD', 0]] } }
    ],
    [
      'a line of three items',
      { provenance: { ...good, lines: [['b5bc1ffd', 0, 1]] } }
    ],
    [
      'a line naming a run it does not have',
      { provenance: { ...good, lines: [['b5bc1ffd', 1]] } }
    ],
    [
      'a line naming run true',
      { provenance: { ...good, lines: [['b5bc1ffd', true]] } }
    ],
    [
      'a line naming run 0.5',
      { provenance: { ...good, lines: [['b5bc1ffd', 0.5]] } }
    ],
    [
      'a getter that throws',
      {
        get provenance() {
          throw new Error('boom');
        }
      }
    ]
  ])('marks nothing for %s, and says why', (_what, architect) => {
    const found = attribute('a = 1\nb = 2\n', architect);
    expect(found.lines.map(line => line.run)).toEqual([null, null]);
    expect(typeof found.problem).toBe('string');
  });

  it('says nothing when there is no record', () => {
    expect(readRecord(undefined)).toBeNull();
    expect(readRecord({ teaching: { mode: 'off' } })).toBeNull();
    expect(attribute('a = 1\n', undefined).problem).toBeNull();
  });

  it('says which run and model wrote a line', () => {
    expect(markTitle(RUN_A)).toBe(
      'Written by the agent (run 4f2a9c1e…, gpt-4o-mini, 1970-01-01 00:00 UTC); unchanged since'
    );
    expect(markTitle({ run: 'r1', model: 'm', at: 'later' })).toBe(
      'Written by the agent (run r1, m); unchanged since'
    );
  });
});

// ------------------------------------------------------------------ in an editor

class FakeCell implements ICellMetadata {
  readonly metadataChanged = new Signal<this, { key: string }>(this);
  constructor(private architect: unknown) {}
  getMetadata(key: string): unknown {
    return key === 'architect' ? this.architect : undefined;
  }
  setArchitect(value: unknown): void {
    this.architect = value;
    this.metadataChanged.emit({ key: 'architect' });
  }
}

function editor(text: string, cell: FakeCell): EditorView {
  return new EditorView({
    state: EditorState.create({
      doc: text,
      extensions: provenanceExtension(cell)
    }),
    parent: document.body
  });
}

const lines = (view: EditorView) => markedLines(view.state).map(m => m.line);

describe('the marks in a cell editor', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
    document.body.innerHTML = '';
  });

  it('marks the agent’s lines when the editor opens, with a tooltip', () => {
    const view = editor(
      '# mine\na = 1\nb = 2\n',
      new FakeCell({ provenance: TWO_LINES })
    );
    expect(markedLines(view.state)).toEqual([
      { line: 2, title: markTitle(RUN_A) },
      { line: 3, title: markTitle(RUN_A) }
    ]);
    view.destroy();
  });

  it('takes a mark off as the person types into its line, and gives it back after an undo', () => {
    const view = editor(
      'a = 1\nb = 2\n',
      new FakeCell({ provenance: TWO_LINES })
    );
    const end = view.state.doc.line(1).to;
    view.dispatch({ changes: { from: end, insert: '0' } });
    expect(lines(view)).toEqual([2]); // at once, before the pause
    jest.advanceTimersByTime(RECOMPUTE_MS + 1);
    expect(lines(view)).toEqual([2]);
    view.dispatch({ changes: { from: end, to: end + 1 } });
    jest.advanceTimersByTime(RECOMPUTE_MS + 1);
    expect(lines(view)).toEqual([1, 2]);
    view.destroy();
  });

  it('moves the marks with lines the person adds, and keeps a line whose end got a new line', () => {
    const view = editor(
      'a = 1\nb = 2\n',
      new FakeCell({ provenance: TWO_LINES })
    );
    view.dispatch({ changes: { from: 0, insert: '# mine\n' } });
    expect(lines(view)).toEqual([3]); // the first line's start was typed at: off until the recompute
    jest.advanceTimersByTime(RECOMPUTE_MS + 1);
    expect(lines(view)).toEqual([2, 3]);
    view.dispatch({
      changes: { from: view.state.doc.line(2).to, insert: '\nc = 3' }
    });
    expect(lines(view)).toEqual([2, 4]);
    jest.advanceTimersByTime(RECOMPUTE_MS + 1);
    expect(lines(view)).toEqual([2, 4]);
    view.destroy();
  });

  it('follows the cell’s metadata: a new record, then none', () => {
    const cell = new FakeCell(undefined);
    const view = editor('a = 1\nb = 2\n', cell);
    expect(lines(view)).toEqual([]);
    cell.setArchitect({ provenance: TWO_LINES });
    jest.advanceTimersByTime(RECOMPUTE_MS + 1);
    expect(lines(view)).toEqual([1, 2]);
    cell.setArchitect(undefined);
    jest.advanceTimersByTime(RECOMPUTE_MS + 1);
    expect(lines(view)).toEqual([]);
    view.destroy();
    // A destroyed editor no longer listens.
    cell.setArchitect({ provenance: TWO_LINES });
    jest.advanceTimersByTime(RECOMPUTE_MS + 1);
  });

  it('draws a mark in the gutter with the tooltip', () => {
    const view = editor(
      'a = 1\nb = 2\n',
      new FakeCell({ provenance: TWO_LINES })
    );
    const marks = view.dom.querySelectorAll(
      '.anb-provenance-gutter .anb-provenance-mark'
    );
    expect(marks).toHaveLength(2);
    expect((marks[0] as HTMLElement).title).toBe(markTitle(RUN_A));
    view.destroy();
  });

  it('never throws on a malformed record: no marks, one warning', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const cell = new FakeCell({ provenance: { ...TWO_LINES, lines: 7 } });
      const view = editor('a = 1\nb = 2\n', cell);
      expect(lines(view)).toEqual([]);
      view.dispatch({ changes: { from: 0, insert: 'x' } });
      jest.advanceTimersByTime(RECOMPUTE_MS + 1);
      expect(lines(view)).toEqual([]);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/its lines are not a list/);
      cell.setArchitect('not an object');
      jest.advanceTimersByTime(RECOMPUTE_MS + 1);
      expect(warn).toHaveBeenCalledTimes(2);
      view.destroy();
    } finally {
      warn.mockRestore();
    }
  });

  it('marks a line of the editor that holds two of Python’s only when both are the agent’s', () => {
    // "a\u2028b\nc": Python sees three lines, the editor two. (Python's hash keeps the \u2028.)
    const hashes = ['a\u2028', 'b', 'c'].map(x => lineHash(x));
    expect(hashes).toEqual(['b25ade36', '3e23e816', '2e7d2c03']); // stamped() in the kernel
    const record = (who: (number | null)[]) => ({
      provenance: {
        v: 1,
        runs: [RUN_A],
        lines: hashes.map((h, i) => [h, who[i]]),
        hash: '0123456789abcdef'
      }
    });
    const all = editor('a\u2028b\nc', new FakeCell(record([0, 0, 0])));
    expect(lines(all)).toEqual([1, 2]);
    all.destroy();
    const mixed = editor('a\u2028b\nc', new FakeCell(record([0, null, 0])));
    expect(lines(mixed)).toEqual([2]);
    mixed.destroy();
  });

  it('is only for cell editors', () => {
    expect(cellOf({ sharedModel: { getSource: () => '' } })).toBeNull();
    expect(cellOf(null)).toBeNull();
    const cell = new FakeCell(undefined);
    expect(cellOf({ sharedModel: cell })).toBe(cell);
  });
});
