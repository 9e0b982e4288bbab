// Output: JSON for --json, aligned tables on a terminal, tab-separated lines in pipes.
import type { IOStreams } from './io.js';
import { colorEnabled, stdoutIsTTY } from './io.js';

export function printJson(io: IOStreams, value: unknown): void {
  io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export type Cell = string | number | boolean | null | undefined;

/**
 * Text in a cell comes from servers and their peers: line breaks become spaces, and every other
 * control character is shown escaped (`\x1b`), so a value can neither break the table nor drive
 * the terminal (clear the screen, set its title). `--json` keeps values exact.
 */
export function cellText(c: Cell): string {
  if (c === null || c === undefined) return '';
  return String(c)
    .replace(/[\t\r\n]+/g, ' ')
    // eslint-disable-next-line no-control-regex -- control characters are what this finds
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * Prints rows. On a TTY: a header row and padded columns. In a pipe: no header,
 * one TSV line per row, so `cut -f` and `awk -F'\t'` work (the GitHub CLI convention).
 */
export function printTable(io: IOStreams, headers: string[], rows: Cell[][]): void {
  const text = rows.map((r) => r.map(cellText));
  // One write for the whole table: a write per line is a system call per line in a pipe.
  if (!stdoutIsTTY(io)) {
    if (text.length > 0) io.stdout.write(text.map((r) => r.join('\t') + '\n').join(''));
    return;
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => (r[i] ?? '').length)));
  const maxWidth = 60;
  const fit = (s: string, w: number): string => {
    const lim = Math.min(w, maxWidth);
    const cut = s.length > lim ? s.slice(0, lim - 1) + '…' : s;
    return cut.padEnd(lim);
  };
  const bold = colorEnabled(io) ? (s: string) => `\u001b[1m${s}\u001b[22m` : (s: string) => s;
  const lines = [bold(headers.map((h, i) => fit(h.toUpperCase(), widths[i]!)).join('  ').trimEnd())];
  for (const r of text) lines.push(r.map((c, i) => fit(c, widths[i]!)).join('  ').trimEnd());
  io.stdout.write(lines.join('\n') + '\n');
}

/** Prints `key: value` lines for one record (human view of `show` commands). */
export function printFields(io: IOStreams, fields: [string, Cell][]): void {
  if (!stdoutIsTTY(io)) {
    if (fields.length > 0) io.stdout.write(fields.map(([k, v]) => `${k}\t${cellText(v)}\n`).join(''));
    return;
  }
  const w = Math.max(...fields.map(([k]) => k.length));
  if (fields.length > 0) io.stdout.write(fields.map(([k, v]) => `${(k + ':').padEnd(w + 1)} ${cellText(v)}\n`).join(''));
}
