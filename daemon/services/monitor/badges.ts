// Status badges as SVG for READMEs and wikis, in the flat style people know from shields.io:
// a grey label on the left, a coloured value on the right. Widths come from a per-character
// table of Verdana 11px advances, so no font is needed on the server.
import { escapeMarkup as esc } from '../../../src/util/markup.js';
import type { TargetStatus } from './status.js';

const COLORS = { green: '#2e8540', yellowgreen: '#7a9c1a', yellow: '#b08800', orange: '#c25e00', red: '#c62828', blue: '#1f6feb', grey: '#6e7781' } as const;

/** Approximate Verdana 11px advance widths; text in badges is short, so ±1px per character is fine. */
function textWidth(s: string): number {
  let w = 0;
  for (const ch of s) {
    if ('il.,:;|!\'`'.includes(ch)) w += 3.5;
    else if ('fjrt()[]{} '.includes(ch)) w += 4.5;
    else if ('mwMW%@'.includes(ch)) w += 10.5;
    else if (ch >= 'A' && ch <= 'Z') w += 7.8;
    else w += 6.8;
  }
  return Math.ceil(w);
}

/** One flat badge. Both texts are escaped; the whole badge carries an accessible title. */
function badge(label: string, value: string, color: string): string {
  const lw = textWidth(label) + 12;
  const vw = textWidth(value) + 12;
  const w = lw + vw;
  const l = esc(label);
  const v = esc(value);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${l}: ${v}"><title>${l}: ${v}</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${vw}" height="20" fill="${color}"/><rect width="${w}" height="20" fill="url(#s)"/></g><g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11"><text x="${lw / 2}" y="15" fill="#010101" fill-opacity=".3">${l}</text><text x="${lw / 2}" y="14">${l}</text><text x="${lw + vw / 2}" y="15" fill="#010101" fill-opacity=".3">${v}</text><text x="${lw + vw / 2}" y="14">${v}</text></g></svg>`;
}

/** The current status: operational, degraded, down, maintenance (a window is active) or no data. */
export function statusBadge(label: string, s: TargetStatus): string {
  if (s.maintenance) return badge(label, 'maintenance', COLORS.blue);
  const st = s.latest?.status;
  if (st === 'operational') return badge(label, 'operational', COLORS.green);
  if (st === 'degraded') return badge(label, 'degraded', COLORS.yellow);
  if (st === 'down') return badge(label, 'down', COLORS.red);
  return badge(label, 'no data', COLORS.grey);
}

/** Uptime with two decimals, coloured by how many nines it has. */
export function uptimeBadge(label: string, uptime: number | null | undefined): string {
  if (typeof uptime !== 'number') return badge(label, 'no data', COLORS.grey);
  const color = uptime >= 99.9 ? COLORS.green : uptime >= 99 ? COLORS.yellowgreen : uptime >= 97 ? COLORS.yellow : uptime >= 95 ? COLORS.orange : COLORS.red;
  return badge(label, `${uptime.toFixed(2)}%`, color);
}
