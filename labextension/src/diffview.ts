/**
 * The diff view: line numbers, syntax colour, a unified / side-by-side toggle,
 * and rows rendered in chunks so a 5,000-line diff costs only what is shown.
 */

import { h } from './dom';
import {
  displayPath,
  IDiffFile,
  IDiffLine,
  parseDiff,
  splitRows,
  SplitRow,
  unifiedRows,
  UnifiedRow
} from './diffparse';
import { appendHighlighted, ILanguage, languageForPath } from './highlight';

export type DiffMode = 'unified' | 'split';

export interface IDiffViewOptions {
  /** Rows rendered at first and added by each "show more". */
  chunk?: number;
  mode?: DiffMode;
}

/** Rows shown before "show more" by default. */
export const DEFAULT_CHUNK = 400;

const SIGNS: Record<IDiffLine['type'], string> = {
  add: '+',
  del: '-',
  context: ' ',
  note: ''
};

function languageCache(): (file: IDiffFile) => ILanguage | null {
  const cache = new Map<IDiffFile, ILanguage | null>();
  return file => {
    if (!cache.has(file)) {
      cache.set(file, languageForPath(displayPath(file)));
    }
    return cache.get(file) ?? null;
  };
}

function numberCell(value: number | null): HTMLTableCellElement {
  return h('td', 'anb-ln', value === null ? '' : String(value));
}

function codeCell(
  line: IDiffLine | null,
  language: ILanguage | null
): HTMLTableCellElement {
  const cell = h('td', `anb-code anb-${line?.type ?? 'empty'}`);
  if (line !== null) {
    appendHighlighted(cell, line.text, line.type === 'note' ? null : language);
  }
  return cell;
}

function headerRow(
  row: { kind: 'file'; file: IDiffFile } | { kind: 'hunk'; header: string },
  span: number
): HTMLTableRowElement {
  const cell = h('td', '');
  cell.colSpan = span;
  if (row.kind === 'file') {
    cell.textContent = displayPath(row.file) || '(diff)';
    return h('tr', 'anb-diff-file', cell);
  }
  cell.textContent = row.header;
  return h('tr', 'anb-diff-hunk', cell);
}

type LineRow = Extract<UnifiedRow, { kind: 'line' }>;
type PairRow = Extract<SplitRow, { kind: 'pair' }>;

function unifiedRow(
  row: LineRow,
  languageOf: (file: IDiffFile) => ILanguage | null
): HTMLTableRowElement {
  const { line } = row;
  return h(
    'tr',
    `anb-line anb-line-${line.type}`,
    numberCell(line.oldNo),
    numberCell(line.newNo),
    h('td', 'anb-sign', SIGNS[line.type]),
    codeCell(line, languageOf(row.file))
  );
}

function splitRow(
  row: PairRow,
  languageOf: (file: IDiffFile) => ILanguage | null
): HTMLTableRowElement {
  const language = languageOf(row.file);
  return h(
    'tr',
    'anb-line',
    numberCell(row.left?.oldNo ?? null),
    codeCell(row.left, language),
    numberCell(row.right?.newNo ?? null),
    codeCell(row.right, language)
  );
}

/** Render a unified diff as a table with a mode toggle and "show more". */
export function renderDiff(
  text: string,
  options: IDiffViewOptions = {}
): HTMLElement {
  const chunk = options.chunk ?? DEFAULT_CHUNK;
  const files = parseDiff(text);
  const languageOf = languageCache();
  let mode: DiffMode = options.mode ?? 'unified';
  let rows: UnifiedRow[] | SplitRow[] = [];
  let shown = 0;

  const added = files.reduce((sum, file) => sum + file.added, 0);
  const removed = files.reduce((sum, file) => sum + file.removed, 0);
  const stats = h(
    'span',
    'anb-diff-stats',
    h('span', 'anb-diff-added', `+${added}`),
    ' ',
    h('span', 'anb-diff-removed', `−${removed}`),
    ` in ${files.length} file${files.length === 1 ? '' : 's'}`
  );
  const unifiedButton = h('button', 'anb-toggle', 'Unified');
  const splitButton = h('button', 'anb-toggle', 'Side by side');
  const body = h('tbody', '');
  const table = h('table', 'anb-diff-table', body);
  const more = h('button', 'anb-more', '');
  const all = h('button', 'anb-more', '');
  const moreBar = h('div', 'anb-more-bar', more, all);
  for (const button of [unifiedButton, splitButton, more, all]) {
    button.type = 'button';
  }

  const showUpTo = (count: number): void => {
    const target = Math.min(count, rows.length);
    const fragment = document.createDocumentFragment();
    for (const row of rows.slice(shown, target)) {
      switch (row.kind) {
        case 'line':
          fragment.append(unifiedRow(row, languageOf));
          break;
        case 'pair':
          fragment.append(splitRow(row, languageOf));
          break;
        default:
          fragment.append(headerRow(row, 4));
      }
    }
    body.append(fragment);
    shown = target;
    const hidden = rows.length - shown;
    moreBar.hidden = hidden === 0;
    more.textContent = `Show ${Math.min(chunk, hidden).toLocaleString('en-US')} more lines`;
    all.textContent = `Show all (${hidden.toLocaleString('en-US')} hidden)`;
  };

  const setMode = (next: DiffMode): void => {
    const keep = Math.max(shown, chunk);
    mode = next;
    rows = mode === 'unified' ? unifiedRows(files) : splitRows(files);
    table.className = `anb-diff-table anb-diff-${mode}`;
    unifiedButton.setAttribute('aria-pressed', String(mode === 'unified'));
    splitButton.setAttribute('aria-pressed', String(mode === 'split'));
    body.replaceChildren();
    shown = 0;
    showUpTo(keep);
  };

  unifiedButton.addEventListener('click', () => setMode('unified'));
  splitButton.addEventListener('click', () => setMode('split'));
  more.addEventListener('click', () => showUpTo(shown + chunk));
  all.addEventListener('click', () => showUpTo(rows.length));

  const view = h(
    'div',
    'anb-diff',
    h(
      'div',
      'anb-diff-toolbar',
      stats,
      h('span', 'anb-diff-modes', unifiedButton, splitButton)
    ),
    h('div', 'anb-diff-scroll', table),
    moreBar
  );
  setMode(mode);
  return view;
}
