import {
  displayPath,
  parseDiff,
  splitRows,
  unifiedRows
} from '../src/diffparse';
import { renderDiff } from '../src/diffview';
import { longText } from '../src/dom';
import { languageForPath, tokenize } from '../src/highlight';
import { buildRunView } from '../src/model';
import { fixture, texts } from './helpers';

function diffOf(
  name: 'every_tool_session' | 'long_diff',
  tool: string
): string {
  const view = buildRunView(fixture(name).events);
  const call = view.steps
    .flatMap(step => step.calls)
    .find(c => c.tool === tool);
  if (!call?.result?.diff) {
    throw new Error(`no ${tool} diff in ${name}`);
  }
  return call.result.diff;
}

describe('parseDiff', () => {
  it('numbers old and new lines of a real edit_file diff', () => {
    const [file] = parseDiff(diffOf('every_tool_session', 'edit_file'));
    expect(file.newPath).toBe('shop/cart.py');
    expect([file.added, file.removed]).toEqual([1, 1]);
    const lines = file.hunks[0].lines;
    const del = lines.find(line => line.type === 'del');
    const add = lines.find(line => line.type === 'add');
    expect(del).toEqual({
      type: 'del',
      oldNo: 21,
      newNo: null,
      text: '        total = 0'
    });
    expect(add).toEqual({
      type: 'add',
      oldNo: null,
      newNo: 21,
      text: '        total = 0.0'
    });
  });

  it('pairs deletions with additions side by side', () => {
    const files = parseDiff(diffOf('every_tool_session', 'apply_patch'));
    const pairs = splitRows(files).filter(row => row.kind === 'pair');
    const changed = pairs.filter(
      row =>
        row.kind === 'pair' &&
        (row.left?.type === 'del' || row.right?.type === 'add')
    );
    expect(changed).toHaveLength(2);
    const [first, second] = changed;
    if (first.kind === 'pair' && second.kind === 'pair') {
      expect(first.left?.type).toBe('del');
      expect(first.right?.text).toContain('discounted = ');
      expect(second.left).toBeNull();
      expect(second.right?.text).toContain('return round(discounted, 2)');
    }
    expect(unifiedRows(files).length).toBeGreaterThan(pairs.length);
  });

  it('keeps "no newline" notes and git headers out of the line numbers', () => {
    const [file] = parseDiff(
      'diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n'
    );
    expect(file.hunks[0].lines.map(line => line.type)).toEqual([
      'del',
      'note',
      'add'
    ]);
    expect(file.hunks[0].lines[2].newNo).toBe(1);
  });
});

describe('highlight', () => {
  it('colours Python keywords, strings, numbers and comments', () => {
    const python = languageForPath('shop/cart.py');
    expect(python?.name).toBe('python');
    const tokens = tokenize('    return x + 12  # "not a string"', python!);
    expect(tokens.filter(t => t.kind).map(t => [t.kind, t.text])).toEqual([
      ['keyword', 'return'],
      ['number', '12'],
      ['comment', '# "not a string"']
    ]);
    expect(tokens.map(t => t.text).join('')).toBe(
      '    return x + 12  # "not a string"'
    );
    expect(languageForPath('README')).toBeNull();
  });

  it('colours notebook code cells as Python, from their cell diff header', () => {
    expect(languageForPath('nb.ipynb [cell 3 id=ab12 code]')?.name).toBe(
      'python'
    );
    expect(languageForPath('nb.ipynb [cell 0 code]')?.name).toBe('python');
    expect(languageForPath('nb.ipynb [cell 1 id=x markdown]')).toBeNull();
    expect(languageForPath('nb.ipynb')?.name).not.toBe('python');
    const files = parseDiff(
      '--- a/nb.ipynb [cell 1 id=ab code]\n+++ b/nb.ipynb [cell 1 id=ab code]\n' +
        '@@ -1 +1 @@\n-x = 1\n+x = 2\n' +
        '--- /dev/null\n+++ b/nb.ipynb [cell 2 id=cd markdown]\n@@ -0,0 +1 @@\n+# Notes\n'
    );
    expect(files.map(displayPath)).toEqual([
      'nb.ipynb [cell 1 id=ab code]',
      'nb.ipynb [cell 2 id=cd markdown]'
    ]);
  });
});

describe('renderDiff', () => {
  it('shows line numbers, signs and coloured code, and toggles to side by side', () => {
    const view = renderDiff(diffOf('every_tool_session', 'edit_file'));
    document.body.replaceChildren(view);
    const added = view.querySelector('tr.anb-line-add');
    expect(added?.querySelectorAll('td.anb-ln')[1].textContent).toBe('21');
    expect(added?.querySelector('.anb-sign')?.textContent).toBe('+');
    expect(view.querySelector('.anb-diff-file')?.textContent).toBe(
      'shop/cart.py'
    );
    expect(texts(view, '.anb-tok-keyword')).toContain('def');
    expect(view.querySelector('.anb-diff-stats')?.textContent).toBe(
      '+1 −1 in 1 file'
    );

    const [unified, split] = Array.from(
      view.querySelectorAll('button.anb-toggle')
    );
    expect(unified.getAttribute('aria-pressed')).toBe('true');
    (split as HTMLButtonElement).click();
    expect(split.getAttribute('aria-pressed')).toBe('true');
    const row = Array.from(view.querySelectorAll('tr.anb-line')).find(r =>
      r.querySelector('td.anb-del')
    );
    const cells = row?.querySelectorAll('td') ?? [];
    expect(cells[0].textContent).toBe('21');
    expect(cells[1].textContent).toBe('        total = 0');
    expect(cells[2].textContent).toBe('21');
    expect(cells[3].textContent).toBe('        total = 0.0');
  });

  it('renders a 5,000-line diff a chunk at a time', () => {
    const text = diffOf('long_diff', 'write_file');
    expect(text.split('\n').length).toBeGreaterThan(5000);
    // Only the first chunk is built: that is what keeps a long diff fast (a timed assertion would flake).
    const view = renderDiff(text, { chunk: 400 });
    const rows = (): number => view.querySelectorAll('tbody tr').length;
    expect(rows()).toBe(400);
    const [more, all] = Array.from(view.querySelectorAll('button.anb-more'));
    expect(all.textContent).toBe('Show all (4,702 hidden)');
    (more as HTMLButtonElement).click();
    expect(rows()).toBe(800);
    (
      view.querySelectorAll('button.anb-toggle')[1] as HTMLButtonElement
    ).click();
    expect(rows()).toBe(800);
    (all as HTMLButtonElement).click();
    expect(rows()).toBe(5102);
    expect((view.querySelector('.anb-more-bar') as HTMLElement).hidden).toBe(
      true
    );
  });
});

describe('hidden characters', () => {
  it('shows bidi overrides, ANSI escapes and zero-width characters in a diff as escapes', () => {
    const diff = [
      '--- a/x.py',
      '+++ b/x.py',
      '@@ -1 +1 @@',
      '-ok = True',
      '+ok = "\u202eeurT"\u200b  # \u001b[8mhidden\u001b[0m',
      ''
    ].join('\n');
    const [file] = parseDiff(diff);
    const added = file.hunks[0].lines[1].text;
    expect(added).toBe('ok = "\\u202eeurT"\\u200b  # \\x1b[8mhidden\\x1b[0m');
  });

  it('keeps tabs and escapes a carriage return in long output', () => {
    const pre = longText('a\tb\r\nc\u0007', 'x');
    expect(pre.textContent).toBe('a\tb\\x0d\nc\\x07');
  });
});
