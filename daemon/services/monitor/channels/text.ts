// What every channel says about an alert, in words: the headline (down, recovered, still down),
// the details (error, times, duration, affected children, links), and labels made safe for
// one-line places (a mail subject, an HTTP header).
import type { AlertEvent } from '../alert-event.js';

/** Everything a channel needs besides the event: the clock, the config's links, the environment. */
export interface SendContext {
  now: number;
  /** `public_url` from the config: the dashboard and status links; absent, no links. */
  publicUrl?: string;
  /** Where secrets named by the config (`smtp_password_env`) are read. */
  env: NodeJS.ProcessEnv;
  /** The whole send's limit. */
  timeoutMs: number;
  /** CA certificates to trust besides the system's (the monitor's `tlsCa` option). */
  tlsCa?: string;
}

/**
 * A label on one line: control characters (CR, LF, tab, NUL, DEL, C1, the Unicode line and
 * paragraph separators) become spaces, runs of spaces one, at most 200 characters. A label is
 * config text; in a mail subject a raw CR LF would start a header of its own.
 */
export function oneLine(s: string, max = 200): string {
  const flat = s.replace(/[\p{Cc}\u2028\u2029]/gu, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export type Phase = 'down' | 'reminder' | 'recovered';

export function phaseOf(e: AlertEvent): Phase {
  if (e.event === 'incident.resolved') return 'recovered';
  return e.reminder !== undefined ? 'reminder' : 'down';
}

/** `api is down`, `api is still down (reminder 2)`, `api recovered`: the label on one line. */
export function headline(e: AlertEvent): string {
  const label = oneLine(e.label);
  switch (phaseOf(e)) {
    case 'down':
      return `${label} is down`;
    case 'reminder':
      return `${label} is still down (reminder ${e.reminder})`;
    case 'recovered':
      return `${label} recovered`;
  }
}

/** `1 h 5 min`, `3 min 2 s`, `40 s`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts = d ? [`${d} d`, h ? `${h} h` : ''] : h ? [`${h} h`, m ? `${m} min` : ''] : m ? [`${m} min`, s % 60 ? `${s % 60} s` : ''] : [`${s} s`];
  return parts.filter(Boolean).join(' ');
}

/** How long the target has been (or was) down, in seconds. */
export function downSeconds(e: AlertEvent, now: number): number {
  if (e.incident.duration_s !== null && e.incident.duration_s !== undefined) return e.incident.duration_s;
  return (now - Date.parse(e.incident.started_at)) / 1000;
}

/** The dashboard and the target's status, when the config says where the monitor is reached. */
export function links(e: AlertEvent, publicUrl: string | undefined): { dashboard: string; status: string } | undefined {
  if (!publicUrl) return undefined;
  return { dashboard: `${publicUrl}/`, status: `${publicUrl}/api/status/${encodeURIComponent(e.target)}` };
}

/** The details as `Key: value` lines: the plain-text body of an email, ntfy's message. */
export function detailLines(e: AlertEvent, ctx: Pick<SendContext, 'now' | 'publicUrl'>): string[] {
  const phase = phaseOf(e);
  const lines = [`${oneLine(e.label)} (${e.target}) on ${oneLine(e.instance)} ${phase === 'recovered' ? 'recovered' : phase === 'reminder' ? `is still down (reminder ${e.reminder})` : 'is down'}.`, ''];
  lines.push(`Error:     ${oneLine(e.incident.cause, 2000)}`);
  lines.push(`Started:   ${e.incident.started_at}`);
  if (e.incident.ended_at) lines.push(`Ended:     ${e.incident.ended_at}`);
  lines.push(`Down for:  ${duration(downSeconds(e, ctx.now))}${phase === 'recovered' ? '' : ' so far'}`);
  if (e.affected?.length) lines.push(`Affected:  ${e.affected.join(', ')} (down because of this target; no alerts of their own)`);
  lines.push(`Incident:  #${e.incident.id}`);
  const l = links(e, ctx.publicUrl);
  if (l) lines.push('', `Dashboard: ${l.dashboard}`, `Status:    ${l.status}`);
  return lines;
}
