/** Cell operations on JupyterLab's real shared notebook model: checks, edits, and what Ctrl+Z reverts. */

import {
  applyOps,
  CellOpError,
  checkOps,
  ICellOp,
  IGuard,
  parseOps,
  sourceSplice
} from '../src/livecells';
import { ids, sharedNotebook, sourceOf, typeInto } from './livenotebook';

const FREE: IGuard = { editing: null, busy: new Set() };

function refused(run: () => void): CellOpError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CellOpError);
    return error as CellOpError;
  }
  throw new Error('the operation was not refused');
}

function threeCells() {
  return sharedNotebook([
    { id: 'load', source: 'df = load()\n' },
    {
      id: 'clean',
      source: 'df = df.dropna()\ndf = df[df.x > 0]\n',
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'ok\n' }]
    },
    { id: 'plot', source: 'df.plot()\n' }
  ]);
}

const newCell = (id: string, source: string) => ({
  cell_type: 'code',
  id,
  source,
  metadata: {},
  outputs: [],
  execution_count: null
});

describe('parseOps', () => {
  it('takes the three operations as the kernel sends them', () => {
    const ops = parseOps([
      { op: 'edit', id: 'a', source: 'x', expect: 'y' },
      { op: 'insert', after: null, cell: newCell('n', 'z') },
      { op: 'delete', id: 'b', expect: 'w' }
    ]);
    expect(ops.map(op => op.op)).toEqual(['edit', 'insert', 'delete']);
    expect(ops[1].after).toBeNull();
  });

  it.each([
    ['no list', { op: 'edit' }],
    ['an empty list', []],
    ['a string', ['edit']],
    ['an unknown operation', [{ op: 'move', id: 'a' }]],
    ['an edit without a source', [{ op: 'edit', id: 'a', expect: 'x' }]],
    ['an edit without an id', [{ op: 'edit', source: 'x' }]],
    [
      'a delete whose expected source is not text',
      [{ op: 'delete', id: 'a', expect: 3 }]
    ],
    ['an insert without a cell', [{ op: 'insert', after: null }]],
    [
      'an insert of a cell without an id',
      [{ op: 'insert', cell: { cell_type: 'code' } }]
    ],
    [
      'an insert of an unknown cell type',
      [{ op: 'insert', cell: { cell_type: 'widget', id: 'n' } }]
    ],
    [
      'an insert after a number',
      [{ op: 'insert', after: 3, cell: newCell('n', '') }]
    ],
    [
      'a huge list',
      Array.from({ length: 1001 }, () => ({ op: 'delete', id: 'a' }))
    ]
  ])('refuses %s', (_what, raw) => {
    expect(refused(() => parseOps(raw)).code).toBe('bad');
  });
});

describe('checkOps and applyOps', () => {
  it('refuses a cell that is gone, typed in, running or changed, and changes nothing', () => {
    const notebook = threeCells();
    const before = JSON.stringify(notebook.toJSON());
    const cases: Array<[ICellOp[], IGuard, string]> = [
      [[{ op: 'edit', id: 'gone', source: 'x', expect: '' }], FREE, 'gone'],
      [
        [
          {
            op: 'edit',
            id: 'clean',
            source: 'x',
            expect: sourceOf(notebook, 'clean')
          }
        ],
        { editing: 'clean', busy: new Set() },
        'typing'
      ],
      [
        [{ op: 'delete', id: 'plot', expect: 'df.plot()\n' }],
        { editing: null, busy: new Set(['plot']) },
        'running'
      ],
      [
        [{ op: 'edit', id: 'load', source: 'x', expect: 'df = load(path)\n' }],
        FREE,
        'changed'
      ],
      [
        [{ op: 'insert', after: null, cell: newCell('load', '') }],
        FREE,
        'taken'
      ],
      [
        [{ op: 'insert', after: 'gone', cell: newCell('n', '') }],
        FREE,
        'anchor'
      ],
      // The second operation fails, so the first is not applied either.
      [
        [
          {
            op: 'edit',
            id: 'load',
            source: 'df = load("a")\n',
            expect: 'df = load()\n'
          },
          { op: 'delete', id: 'load', expect: 'df = load()\n' }
        ],
        FREE,
        'changed'
      ]
    ];
    for (const [ops, guard, code] of cases) {
      const error = refused(() => applyOps(notebook, ops, guard));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(/nothing changed/);
    }
    expect(JSON.stringify(notebook.toJSON())).toBe(before);
  });

  it('sees the effect of earlier operations in the same list', () => {
    const notebook = threeCells();
    expect(() =>
      checkOps(
        notebook,
        [
          { op: 'insert', after: 'load', cell: newCell('n', 'a\n') },
          { op: 'edit', id: 'n', source: 'b\n', expect: 'a\n' },
          { op: 'delete', id: 'n', expect: 'b\n' }
        ],
        FREE
      )
    ).not.toThrow();
  });

  it('edits, inserts and deletes by id, keeping outputs and the other cells', () => {
    const notebook = threeCells();
    typeInto(notebook, 'plot', 0, '# typed, unsaved\n');
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'clean',
          source: 'df = clean(df)\n',
          expect: sourceOf(notebook, 'clean')
        },
        {
          op: 'insert',
          after: 'load',
          cell: newCell('imp', 'from cleaning import clean\n')
        },
        {
          op: 'insert',
          after: null,
          cell: {
            cell_type: 'markdown',
            id: 'title',
            source: ['# A', 'nalysis'],
            metadata: {}
          }
        },
        { op: 'delete', id: 'load', expect: 'df = load()\n' }
      ],
      FREE
    );
    expect(ids(notebook)).toEqual(['title', 'imp', 'clean', 'plot']);
    expect(sourceOf(notebook, 'title')).toBe('# Analysis');
    expect(sourceOf(notebook, 'clean')).toBe('df = clean(df)\n');
    expect(sourceOf(notebook, 'plot')).toBe('# typed, unsaved\ndf.plot()\n');
    const clean = notebook.toJSON().cells.find(c => c.id === 'clean');
    expect(clean?.outputs).toEqual([
      { output_type: 'stream', name: 'stdout', text: 'ok\n' }
    ]);
  });

  it('replaces only the span that differs', () => {
    expect(sourceSplice('abcdef', 'abXYef')).toEqual([2, 4, 'XY']);
    expect(sourceSplice('abc', 'abc')).toEqual([3, 3, '']);
    expect(sourceSplice('', 'new')).toEqual([0, 0, 'new']);
    expect(sourceSplice('aaa', 'aaaa')).toEqual([3, 3, 'a']);
    expect(sourceSplice('x = 1\n', '')).toEqual([0, 6, '']);
  });
});

describe("JupyterLab's undo", () => {
  it("Ctrl+Z in the edited cell reverts the agent's edit and keeps what the person typed just before", () => {
    const notebook = threeCells();
    typeInto(notebook, 'clean', 0, '# mine\n'); // the person, a moment before the agent
    const typed = sourceOf(notebook, 'clean');
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'clean',
          source: typed.replace('dropna()', 'fillna(0)'),
          expect: typed
        }
      ],
      FREE
    );
    expect(sourceOf(notebook, 'clean')).toContain('fillna(0)');
    const cell = notebook.cells[1];
    expect(cell.undo()).toBe(true);
    expect(sourceOf(notebook, 'clean')).toBe(typed);
    expect(cell.undo()).toBe(true); // then the person's own typing
    expect(sourceOf(notebook, 'clean')).toBe(
      'df = df.dropna()\ndf = df[df.x > 0]\n'
    );
  });

  it('Ctrl+Z in command mode takes back an insert, then a delete, one at a time', () => {
    const notebook = threeCells();
    applyOps(
      notebook,
      [{ op: 'insert', after: 'load', cell: newCell('imp', 'import x\n') }],
      FREE
    );
    applyOps(
      notebook,
      [{ op: 'delete', id: 'plot', expect: 'df.plot()\n' }],
      FREE
    );
    expect(ids(notebook)).toEqual(['load', 'imp', 'clean']);
    notebook.undo();
    expect(ids(notebook)).toEqual(['load', 'imp', 'clean', 'plot']);
    expect(sourceOf(notebook, 'plot')).toBe('df.plot()\n');
    notebook.undo();
    expect(ids(notebook)).toEqual(['load', 'clean', 'plot']);
  });

  it('with document-wide undo, each operation is still one step', () => {
    const notebook = sharedNotebook(
      [
        { id: 'a', source: 'a\n' },
        { id: 'b', source: 'b\n' }
      ],
      true
    );
    typeInto(notebook, 'a', 0, 'typed ');
    applyOps(
      notebook,
      [{ op: 'edit', id: 'b', source: 'B\n', expect: 'b\n' }],
      FREE
    );
    applyOps(notebook, [{ op: 'delete', id: 'a', expect: 'typed a\n' }], FREE);
    notebook.undo();
    expect(ids(notebook)).toEqual(['a', 'b']);
    expect(sourceOf(notebook, 'b')).toBe('B\n');
    notebook.undo();
    expect(sourceOf(notebook, 'b')).toBe('b\n');
    expect(sourceOf(notebook, 'a')).toBe('typed a\n');
  });
});
