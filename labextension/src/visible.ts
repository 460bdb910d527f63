/**
 * Hidden characters made visible, as the kernel's approval prompt shows them: control characters, ANSI
 * escapes, bidi overrides and zero-width characters become `\uXXXX` escapes (tabs and line ends stay), so a
 * diff or a command's output can neither hide nor reorder what it says.
 */

/** Inclusive code-point ranges that are shown as escapes. */
const HIDDEN: ReadonlyArray<readonly [number, number]> = [
  [0x00, 0x08],
  [0x0b, 0x1f],
  [0x7f, 0x9f],
  [0xad, 0xad],
  [0x61c, 0x61c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff9, 0xfffb]
];

function hidden(code: number): boolean {
  return HIDDEN.some(([low, high]) => code >= low && code <= high);
}

function escape(code: number): string {
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every hidden character shown as an escape. */
export function visible(text: string): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x20 && code < 0x7f) {
      continue; // printable ASCII, the common case
    }
    if (code === 0x09 || code === 0x0a || !hidden(code)) {
      continue;
    }
    out += text.slice(start, i) + escape(code);
    start = i + 1;
  }
  return start === 0 ? text : out + text.slice(start);
}
