/**
 * A forgiving unified-diff parser (`diff -u` and `git diff`): files, hunks and
 * lines with their old and new line numbers, plus the pairing used by the
 * side-by-side view.
 */

import { visible } from './visible';

export type LineType = 'add' | 'del' | 'context' | 'note';

export interface IDiffLine {
  type: LineType;
  oldNo: number | null;
  newNo: number | null;
  text: string;
}

export interface IDiffHunk {
  header: string;
  lines: IDiffLine[];
}

export interface IDiffFile {
  oldPath: string;
  newPath: string;
  hunks: IDiffHunk[];
  added: number;
  removed: number;
}

/** The path to show for a file: the new one, unless the file was deleted. */
export function displayPath(file: IDiffFile): string {
  return file.newPath === '/dev/null' ? file.oldPath : file.newPath;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

function stripPrefix(path: string): string {
  const name = visible(path.split('\t')[0].trim());
  return /^[ab]\//.test(name) ? name.slice(2) : name;
}

/** Parse a unified diff. Text outside hunks (`diff --git`, `index …`) is skipped. */
export function parseDiff(text: string): IDiffFile[] {
  const files: IDiffFile[] = [];
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') {
    lines.pop();
  }
  let file: IDiffFile | null = null;
  let hunk: IDiffHunk | null = null;
  let oldNo = 0;
  let newNo = 0;

  const ensureFile = (): IDiffFile => {
    if (file === null) {
      file = { oldPath: '', newPath: '', hunks: [], added: 0, removed: 0 };
      files.push(file);
    }
    return file;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ')) {
      file = {
        oldPath: stripPrefix(line.slice(4)),
        newPath: stripPrefix(lines[i + 1].slice(4)),
        hunks: [],
        added: 0,
        removed: 0
      };
      files.push(file);
      hunk = null;
      i += 1;
      continue;
    }
    const header = HUNK.exec(line);
    if (header !== null) {
      hunk = { header: line, lines: [] };
      ensureFile().hunks.push(hunk);
      oldNo = Number(header[1]);
      newNo = Number(header[2]);
      continue;
    }
    if (hunk === null) {
      continue;
    }
    const current = ensureFile();
    const sign = line[0];
    if (sign === '+') {
      hunk.lines.push({
        type: 'add',
        oldNo: null,
        newNo,
        text: visible(line.slice(1))
      });
      newNo += 1;
      current.added += 1;
    } else if (sign === '-') {
      hunk.lines.push({
        type: 'del',
        oldNo,
        newNo: null,
        text: visible(line.slice(1))
      });
      oldNo += 1;
      current.removed += 1;
    } else if (sign === '\\') {
      hunk.lines.push({
        type: 'note',
        oldNo: null,
        newNo: null,
        text: visible(line)
      });
    } else if (sign === ' ' || line === '') {
      hunk.lines.push({
        type: 'context',
        oldNo,
        newNo,
        text: visible(line.slice(1))
      });
      oldNo += 1;
      newNo += 1;
    } else {
      hunk = null;
    }
  }
  return files;
}

/** One row of a rendered diff: a file header, a hunk header, or a line. */
export type UnifiedRow =
  | { kind: 'file'; file: IDiffFile }
  | { kind: 'hunk'; header: string }
  | { kind: 'line'; line: IDiffLine; file: IDiffFile };

/** One row of the side-by-side view: deletions on the left, additions on the right. */
export type SplitRow =
  | { kind: 'file'; file: IDiffFile }
  | { kind: 'hunk'; header: string }
  | {
      kind: 'pair';
      left: IDiffLine | null;
      right: IDiffLine | null;
      file: IDiffFile;
    };

export function unifiedRows(files: readonly IDiffFile[]): UnifiedRow[] {
  const rows: UnifiedRow[] = [];
  for (const file of files) {
    rows.push({ kind: 'file', file });
    for (const hunk of file.hunks) {
      rows.push({ kind: 'hunk', header: hunk.header });
      for (const line of hunk.lines) {
        rows.push({ kind: 'line', line, file });
      }
    }
  }
  return rows;
}

export function splitRows(files: readonly IDiffFile[]): SplitRow[] {
  const rows: SplitRow[] = [];
  for (const file of files) {
    rows.push({ kind: 'file', file });
    for (const hunk of file.hunks) {
      rows.push({ kind: 'hunk', header: hunk.header });
      let dels: IDiffLine[] = [];
      let adds: IDiffLine[] = [];
      const flush = (): void => {
        const count = Math.max(dels.length, adds.length);
        for (let i = 0; i < count; i++) {
          rows.push({
            kind: 'pair',
            left: dels[i] ?? null,
            right: adds[i] ?? null,
            file
          });
        }
        dels = [];
        adds = [];
      };
      for (const line of hunk.lines) {
        if (line.type === 'del') {
          if (adds.length > 0) {
            flush();
          }
          dels.push(line);
        } else if (line.type === 'add') {
          adds.push(line);
        } else {
          flush();
          const right = line.type === 'note' ? null : line;
          rows.push({ kind: 'pair', left: line, right, file });
        }
      }
      flush();
    }
  }
  return rows;
}
