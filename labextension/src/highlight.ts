/**
 * A small line-at-a-time syntax colourer for diff and code lines: keywords,
 * strings, comments and numbers. It runs offline, costs one pass per line, and
 * never builds HTML from strings. Strings spanning lines are coloured per line.
 */

export interface ILanguage {
  name: string;
  keywords: ReadonlySet<string>;
  /** Line-comment openers, such as `#` or `//`. */
  comments: readonly string[];
  /** String quote characters. */
  quotes: readonly string[];
}

const words = (text: string): ReadonlySet<string> =>
  new Set(text.split(/\s+/).filter(Boolean));

const PYTHON: ILanguage = {
  name: 'python',
  keywords:
    words(`False None True and as assert async await break class continue def del elif
    else except finally for from global if import in is lambda nonlocal not or pass raise return
    try while with yield match case self`),
  comments: ['#'],
  quotes: ['"', "'"]
};

const JAVASCRIPT: ILanguage = {
  name: 'javascript',
  keywords:
    words(`abstract as async await break case catch class const continue debugger default
    delete do else enum export extends false finally for from function if implements import in
    instanceof interface let new null of private protected public readonly return static super
    switch this throw true try type typeof undefined var void while yield`),
  comments: ['//'],
  quotes: ['"', "'", '`']
};

const SHELL: ILanguage = {
  name: 'shell',
  keywords:
    words(`if then else elif fi for while until do done case esac in function return
    export local readonly set unset echo cd exit`),
  comments: ['#'],
  quotes: ['"', "'"]
};

const CONFIG: ILanguage = {
  name: 'config',
  keywords: words('true false null yes no on off'),
  comments: ['#'],
  quotes: ['"', "'"]
};

const JSON_LANGUAGE: ILanguage = {
  name: 'json',
  keywords: words('true false null'),
  comments: [],
  quotes: ['"']
};

const C_LIKE: ILanguage = {
  name: 'c-like',
  keywords:
    words(`auto break case catch char class const continue default do double else enum
    extern false fn float for func go if impl import int let long loop match mod mut new nil null
    package pub return self short static struct switch this throw true try type use var void
    while`),
  comments: ['//'],
  quotes: ['"', "'"]
};

const CSS: ILanguage = {
  name: 'css',
  keywords: words('important inherit initial unset none auto'),
  comments: [],
  quotes: ['"', "'"]
};

const BY_EXTENSION: Record<string, ILanguage> = {
  py: PYTHON,
  pyi: PYTHON,
  ipynb: JSON_LANGUAGE,
  js: JAVASCRIPT,
  mjs: JAVASCRIPT,
  cjs: JAVASCRIPT,
  jsx: JAVASCRIPT,
  ts: JAVASCRIPT,
  tsx: JAVASCRIPT,
  sh: SHELL,
  bash: SHELL,
  zsh: SHELL,
  yml: CONFIG,
  yaml: CONFIG,
  toml: CONFIG,
  cfg: CONFIG,
  ini: CONFIG,
  json: JSON_LANGUAGE,
  c: C_LIKE,
  h: C_LIKE,
  cc: C_LIKE,
  cpp: C_LIKE,
  hpp: C_LIKE,
  java: C_LIKE,
  go: C_LIKE,
  rs: C_LIKE,
  css: CSS
};

const BY_NAME: Record<string, ILanguage> = {
  python: PYTHON,
  py: PYTHON,
  javascript: JAVASCRIPT,
  js: JAVASCRIPT,
  typescript: JAVASCRIPT,
  ts: JAVASCRIPT,
  bash: SHELL,
  sh: SHELL,
  shell: SHELL,
  console: SHELL,
  yaml: CONFIG,
  toml: CONFIG,
  json: JSON_LANGUAGE,
  c: C_LIKE,
  cpp: C_LIKE,
  rust: C_LIKE,
  go: C_LIKE,
  java: C_LIKE,
  css: CSS
};

/** The language of a file path by its extension, or null for plain text. */
export function languageForPath(path: string): ILanguage | null {
  // A notebook cell's diff section: 'analysis.ipynb [cell 3 id=ab12 code]'.
  const cell = / \[cell \d+(?: id=\S+)? (\w+)\]$/.exec(path);
  if (cell !== null) {
    return cell[1] === 'code' ? PYTHON : null;
  }
  const base = path.split('/').pop() ?? '';
  if (base === 'Makefile' || base === 'Dockerfile') {
    return SHELL;
  }
  const dot = base.lastIndexOf('.');
  if (dot < 0) {
    return null;
  }
  return BY_EXTENSION[base.slice(dot + 1).toLowerCase()] ?? null;
}

/** The language of a Markdown fence's info string (`python`, `ts`, …). */
export function languageForName(name: string): ILanguage | null {
  return BY_NAME[name.trim().toLowerCase()] ?? null;
}

/** The token kinds, which are also CSS class suffixes (`anb-tok-keyword`). */
export type TokenKind = 'keyword' | 'string' | 'comment' | 'number';

export interface IToken {
  kind: TokenKind | null;
  text: string;
}

const IDENT = /[A-Za-z_$][\w$]*/y;
const NUMBER = /(?:0[xob][\da-f_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:e[+-]?\d+)?)/iy;

/** Split one line into coloured and plain runs. */
export function tokenize(line: string, language: ILanguage): IToken[] {
  const tokens: IToken[] = [];
  let plain = '';
  const push = (kind: TokenKind, text: string): void => {
    if (plain) {
      tokens.push({ kind: null, text: plain });
      plain = '';
    }
    tokens.push({ kind, text });
  };
  let i = 0;
  while (i < line.length) {
    const ch = line[i];
    const comment = language.comments.find(open => line.startsWith(open, i));
    if (comment !== undefined) {
      push('comment', line.slice(i));
      break;
    }
    if (language.quotes.includes(ch)) {
      let end = i + 1;
      while (end < line.length && line[end] !== ch) {
        end += line[end] === '\\' ? 2 : 1;
      }
      end = Math.min(end + 1, line.length);
      push('string', line.slice(i, end));
      i = end;
      continue;
    }
    const prev = i > 0 ? line[i - 1] : '';
    if (/[\d]/.test(ch) && !/[\w$.]/.test(prev)) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(line);
      if (match) {
        push('number', match[0]);
        i += match[0].length;
        continue;
      }
    }
    if (/[A-Za-z_$]/.test(ch)) {
      IDENT.lastIndex = i;
      const word = (IDENT.exec(line) ?? [ch])[0];
      if (language.keywords.has(word) && prev !== '.') {
        push('keyword', word);
      } else {
        plain += word;
      }
      i += word.length;
      continue;
    }
    plain += ch;
    i += 1;
  }
  if (plain) {
    tokens.push({ kind: null, text: plain });
  }
  return tokens;
}

/** Append a coloured line to `parent`: spans for tokens, text nodes for the rest. */
export function appendHighlighted(
  parent: HTMLElement,
  line: string,
  language: ILanguage | null
): void {
  if (language === null) {
    parent.append(line);
    return;
  }
  for (const token of tokenize(line, language)) {
    if (token.kind === null) {
      parent.append(token.text);
    } else {
      const span = document.createElement('span');
      span.className = `anb-tok-${token.kind}`;
      span.textContent = token.text;
      parent.append(span);
    }
  }
}
