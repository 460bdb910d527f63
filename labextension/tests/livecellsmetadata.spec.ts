/** The cell metadata that cell operations carry: an insert's whole cell, an edit's `architect` key. */

import {
  applyOps,
  CellOpError,
  ICellOp,
  IGuard,
  parseOps
} from '../src/livecells';
import { sharedNotebook, sourceOf } from './livenotebook';

const FREE: IGuard = { editing: null, busy: new Set() };

const RECORD = {
  provenance: {
    v: 1,
    runs: [{ run: 'r1', model: 'scripted', at: '2026-12-07T05:23:11Z' }],
    lines: [['b6ac3f3a', 0]],
    hash: '0123456789abcdef'
  }
};

function metadataOf(
  notebook: ReturnType<typeof sharedNotebook>,
  id: string
): { [key: string]: unknown } {
  const cell = notebook.cells.find(c => c.getId() === id);
  return (cell?.getMetadata() ?? {}) as { [key: string]: unknown };
}

function twoCells() {
  return sharedNotebook([
    { id: 'a', source: 'x = 1\n' },
    { id: 'b', source: 'y = 2\n' }
  ]);
}

describe('parseOps and the architect key', () => {
  it('keeps an edit’s architect object, and leaves it out when absent', () => {
    const [withKey, without, empty] = parseOps([
      { op: 'edit', id: 'a', source: 'x', expect: 'y', architect: RECORD },
      { op: 'edit', id: 'a', source: 'x', expect: 'y' },
      { op: 'edit', id: 'a', source: 'x', expect: 'y', architect: {} }
    ]);
    expect(withKey.architect).toEqual(RECORD);
    expect('architect' in without).toBe(false);
    expect(empty.architect).toEqual({});
  });

  it.each([
    ['a string', 'provenance'],
    ['a list', [RECORD]],
    ['null', null],
    ['a number', 3]
  ])('refuses the whole list when architect is %s', (_what, value) => {
    try {
      parseOps([
        { op: 'edit', id: 'b', source: 'z\n', expect: 'y = 2\n' },
        { op: 'edit', id: 'a', source: 'x', expect: 'y', architect: value }
      ]);
    } catch (error) {
      expect(error).toBeInstanceOf(CellOpError);
      expect((error as CellOpError).code).toBe('bad');
      return;
    }
    throw new Error('not refused');
  });
});

describe('applyOps and cell metadata', () => {
  it('sets the architect metadata with the source, keeping the other keys', () => {
    const notebook = twoCells();
    notebook.cells[0].setMetadata('tags', ['keep']);
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'a',
          source: 'x = 1\nz = 3\n',
          expect: 'x = 1\n',
          architect: RECORD
        }
      ],
      FREE
    );
    expect(sourceOf(notebook, 'a')).toBe('x = 1\nz = 3\n');
    expect(metadataOf(notebook, 'a')).toEqual({
      tags: ['keep'],
      architect: RECORD
    });
    expect(metadataOf(notebook, 'b')).toEqual({});
  });

  it('deletes the architect key for {}, and leaves metadata alone without the key', () => {
    const notebook = twoCells();
    notebook.cells[0].setMetadata('architect', RECORD);
    notebook.cells[0].setMetadata('tags', ['keep']);
    applyOps(
      notebook,
      [{ op: 'edit', id: 'a', source: 'x = 2\n', expect: 'x = 1\n' }],
      FREE
    );
    expect(metadataOf(notebook, 'a')).toEqual({
      tags: ['keep'],
      architect: RECORD
    });
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'a',
          source: 'x = 1\n',
          expect: 'x = 2\n',
          architect: {}
        }
      ],
      FREE
    );
    expect(metadataOf(notebook, 'a')).toEqual({ tags: ['keep'] });
    // Deleting a key that is not there is no error.
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'b',
          source: 'y = 2\n',
          expect: 'y = 2\n',
          architect: {}
        }
      ],
      FREE
    );
    expect(metadataOf(notebook, 'b')).toEqual({});
  });

  it('changes no metadata when a later operation of the list is refused', () => {
    const notebook = twoCells();
    const before = JSON.stringify(notebook.toJSON());
    const ops: ICellOp[] = [
      {
        op: 'edit',
        id: 'a',
        source: 'x = 5\n',
        expect: 'x = 1\n',
        architect: RECORD
      },
      { op: 'edit', id: 'b', source: 'y\n', expect: 'not what it is\n' }
    ];
    expect(() => applyOps(notebook, ops, FREE)).toThrow(CellOpError);
    expect(JSON.stringify(notebook.toJSON())).toBe(before);
  });

  it('Ctrl+Z in the cell takes back the source and its record together', () => {
    const notebook = twoCells();
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'a',
          source: 'x = 1\nz = 3\n',
          expect: 'x = 1\n',
          architect: RECORD
        }
      ],
      FREE
    );
    expect(notebook.cells[0].undo()).toBe(true);
    expect(sourceOf(notebook, 'a')).toBe('x = 1\n');
    expect(metadataOf(notebook, 'a')).toEqual({});
  });

  it('an undo sent by the kernel puts the previous record back', () => {
    const notebook = twoCells();
    const older = {
      provenance: { ...RECORD.provenance, hash: 'fedcba9876543210' }
    };
    notebook.cells[0].setMetadata('architect', older);
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'a',
          source: 'x = 9\n',
          expect: 'x = 1\n',
          architect: RECORD
        }
      ],
      FREE
    );
    applyOps(
      notebook,
      [
        {
          op: 'edit',
          id: 'a',
          source: 'x = 1\n',
          expect: 'x = 9\n',
          architect: older
        }
      ],
      FREE
    );
    expect(sourceOf(notebook, 'a')).toBe('x = 1\n');
    expect(metadataOf(notebook, 'a')).toEqual({ architect: older });
  });

  it('an insert keeps the cell’s metadata, its record included', () => {
    const notebook = twoCells();
    applyOps(
      notebook,
      [
        {
          op: 'insert',
          after: 'a',
          cell: {
            cell_type: 'code',
            id: 'n',
            source: 'p = 1\nq = 2\n',
            metadata: { architect: RECORD, tags: ['t'] },
            outputs: [],
            execution_count: null
          }
        }
      ],
      FREE
    );
    expect(metadataOf(notebook, 'n')).toEqual({
      architect: RECORD,
      tags: ['t']
    });
    const saved = notebook.toJSON().cells.find(c => c.id === 'n');
    expect(saved?.metadata).toEqual({ architect: RECORD, tags: ['t'] });
  });
});
