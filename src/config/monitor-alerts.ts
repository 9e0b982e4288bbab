// The monitor config's alert channels (`alerts:`) and each target's routing (`targets.X.alerts`):
// the types and their reading, with FILE:LINE problems like the rest of monitor.ts.
import type { Reader } from './yaml-reader.js';

export const CHANNEL_TYPES = ['webhook', 'slack', 'discord', 'teams', 'ntfy', 'pagerduty', 'email'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** The PagerDuty Events API v2 endpoint (`url:` overrides it: a proxy, a test receiver). */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

interface ChannelBase {
  /** Unique; what targets route by, what logs and `mkt monitor alerts` show (never the URL). */
  name: string;
}
export interface WebhookChannel extends ChannelBase {
  type: 'webhook';
  url: string;
  /** `json` (the AlertEvent) or, for legacy `format: slack` entries, Slack's `{text}`. */
  format: 'json';
  /** Signs the body: `Mkt-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`. */
  secret?: string;
}
export interface ChatChannel extends ChannelBase {
  type: 'slack' | 'discord' | 'teams';
  url: string;
}
export interface NtfyChannel extends ChannelBase {
  type: 'ntfy';
  /** The topic URL (`https://ntfy.sh/<topic>`). */
  url: string;
  /** An access token (`Authorization: Bearer`), for a protected topic. */
  token?: string;
}
export interface PagerDutyChannel extends ChannelBase {
  type: 'pagerduty';
  routingKey: string;
  url: string;
  severity: 'critical' | 'error' | 'warning' | 'info';
}
export interface EmailChannel extends ChannelBase {
  type: 'email';
  /** `smtps://[user[:pass]@]host[:465]` (implicit TLS) or `smtp://...` (STARTTLS when offered). */
  smtp: string;
  /** The environment variable holding the SMTP password (instead of one in the URL). */
  smtpPasswordEnv?: string;
  from: string;
  to: string[];
}
export type AlertChannel = WebhookChannel | ChatChannel | NtfyChannel | PagerDutyChannel | EmailChannel;
/** The name of old: every alert entry was a webhook. */
export type AlertHook = AlertChannel;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const EMAIL = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;
const SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;

const KEYS: Record<ChannelType, string[]> = {
  webhook: ['url', 'format', 'secret'],
  slack: ['url'],
  discord: ['url'],
  teams: ['url'],
  ntfy: ['url', 'token'],
  pagerduty: ['routing_key', 'url', 'severity'],
  email: ['smtp', 'smtp_password_env', 'from', 'to'],
};

/**
 * An http(s) URL setting. Unlike Reader.url, a problem never quotes the value: a channel URL
 * often is the secret (Slack's, Discord's, a token in a query).
 */
function secretUrl(r: Reader, path: (string | number)[], required: boolean): string | undefined {
  if (!r.has(path)) return required ? r.fail(path.slice(0, -1), `needs ${String(path[path.length - 1])}`) : undefined;
  const v = r.string(path);
  if (v === undefined) return undefined;
  try {
    const u = new URL(v.trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    return v.trim();
  } catch {
    return r.fail(path, 'must be an http(s) URL (its value is not repeated here: it may hold a secret)');
  }
}

function readChannel(r: Reader, i: number, seen: Set<string>): AlertChannel | undefined {
  const p = ['alerts', i];
  const raw = r.get(p);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return r.fail(p, 'must be a mapping: a name, a type and its settings');
  const problems = r.problems.length;
  const rawType = r.string([...p, 'type']);
  const format = r.has([...p, 'format']) ? r.string([...p, 'format']) : undefined;
  // Legacy entries: `{url, format: slack}` is a Slack channel, `{url}` a JSON webhook.
  let type: ChannelType | undefined = (rawType ?? (format === 'slack' ? 'slack' : 'webhook')) as ChannelType;
  if (!CHANNEL_TYPES.includes(type)) {
    r.fail([...p, 'type'], `must be one of ${CHANNEL_TYPES.join(', ')}`);
    type = undefined;
  }
  if (type) r.keys(p, ['name', 'type', ...KEYS[type], ...(type === 'slack' && rawType === undefined ? ['format'] : [])]);
  if (format !== undefined && format !== 'json' && format !== 'slack') r.fail([...p, 'format'], 'must be json or slack');
  else if (format === 'slack' && rawType !== undefined) r.fail([...p, 'format'], 'is the old way to say `type: slack`: give one');

  const legacy = !r.has([...p, 'name']) && rawType === undefined;
  let name = legacy ? `webhook-${i + 1}` : r.string([...p, 'name']);
  if (!legacy && !r.has([...p, 'name'])) r.fail(p, 'needs a name (targets route alerts by it; only a bare `url` entry may leave it out)');
  else if (name !== undefined && !NAME.test(name)) r.fail([...p, 'name'], 'must be 1-64 letters, digits, dot, dash or underscore');
  else if (name !== undefined && seen.has(name)) r.fail([...p, 'name'], `repeats the alert channel name ${name}`);
  if (name !== undefined) seen.add(name);
  name ??= '';

  let channel: AlertChannel | undefined;
  switch (type) {
    case 'webhook': {
      const url = secretUrl(r, [...p, 'url'], true);
      const secret = r.string([...p, 'secret']);
      if (url) channel = { name, type, url, format: 'json', ...(secret !== undefined ? { secret } : {}) };
      break;
    }
    case 'slack':
    case 'discord':
    case 'teams': {
      const url = secretUrl(r, [...p, 'url'], true);
      if (url) channel = { name, type, url };
      break;
    }
    case 'ntfy': {
      const url = secretUrl(r, [...p, 'url'], true);
      const token = r.string([...p, 'token']);
      if (url) channel = { name, type, url, ...(token !== undefined ? { token } : {}) };
      break;
    }
    case 'pagerduty': {
      const routingKey = r.has([...p, 'routing_key']) ? r.string([...p, 'routing_key']) : r.fail(p, 'needs a routing_key (the integration key of a PagerDuty service, Events API v2)');
      const url = secretUrl(r, [...p, 'url'], false) ?? PAGERDUTY_EVENTS_URL;
      const severity = r.string([...p, 'severity'], 'critical') as PagerDutyChannel['severity'];
      if (!SEVERITIES.includes(severity)) r.fail([...p, 'severity'], `must be one of ${SEVERITIES.join(', ')}`);
      if (routingKey) channel = { name, type, routingKey, url, severity };
      break;
    }
    case 'email':
      channel = readEmail(r, p, name);
      break;
    default:
      break;
  }
  return r.problems.length === problems ? channel : undefined;
}

function readEmail(r: Reader, p: (string | number)[], name: string): EmailChannel | undefined {
  let smtp: string | undefined;
  if (!r.has([...p, 'smtp'])) r.fail(p, 'needs smtp: smtps://user:pass@host:465 (implicit TLS) or smtp://host:587 (STARTTLS when offered)');
  else {
    const v = r.string([...p, 'smtp']);
    try {
      const u = v === undefined ? undefined : new URL(v.trim());
      if (u && ((u.protocol !== 'smtp:' && u.protocol !== 'smtps:') || !u.hostname || (u.pathname !== '' && u.pathname !== '/'))) throw new Error('shape');
      smtp = v?.trim();
    } catch {
      r.fail([...p, 'smtp'], 'must be smtps://[user[:password]@]host[:port] or smtp://... (its value is not repeated here: it may hold a password)');
    }
  }
  const env = r.string([...p, 'smtp_password_env']);
  if (env !== undefined && !ENV_NAME.test(env)) r.fail([...p, 'smtp_password_env'], 'must be the name of an environment variable, like MKT_SMTP_PASSWORD');
  const from = r.string([...p, 'from']);
  if (!r.has([...p, 'from'])) r.fail(p, 'needs from: the sender address');
  else if (from !== undefined && !EMAIL.test(from)) r.fail([...p, 'from'], 'must be one email address, like mkt@example.com');
  const rawTo = r.get([...p, 'to']);
  const to = typeof rawTo === 'string' ? [rawTo] : Array.isArray(rawTo) ? rawTo.map((x) => (typeof x === 'string' ? x.trim() : '')) : undefined;
  if (!r.has([...p, 'to'])) r.fail(p, 'needs to: one address or a list of them');
  else if (!to || to.length === 0 || to.some((a) => !EMAIL.test(a))) r.fail([...p, 'to'], 'must be an email address or a list of them');
  if (!smtp || !from || !to) return undefined;
  return { name, type: 'email', smtp, ...(env !== undefined ? { smtpPasswordEnv: env } : {}), from, to };
}

/** `alerts:` at the top: the channels, in order, each with a unique name. */
export function readAlertChannels(r: Reader): AlertChannel[] {
  const out: AlertChannel[] = [];
  const seen = new Set<string>();
  r.seq(['alerts']).forEach((_, i) => {
    const c = readChannel(r, i, seen);
    if (c) out.push(c);
  });
  return out;
}

/**
 * A target's `alerts: [names]`: the channels its alerts go to. Absent: every channel (undefined);
 * `[]`: none. A name no channel has is a problem.
 */
export function readTargetAlerts(r: Reader, target: string, channels: string[]): string[] | undefined {
  const p = ['targets', target, 'alerts'];
  if (!r.has(p)) return undefined;
  const raw = r.get(p);
  if (raw === null || (Array.isArray(raw) && raw.length === 0)) return [];
  const out: string[] = [];
  r.seq(p).forEach((_, j) => {
    const n = r.string([...p, j]);
    if (n === undefined) return;
    if (!channels.includes(n)) r.fail([...p, j], `names no alert channel: ${n} (known: ${channels.join(', ') || 'none'})`);
    else if (!out.includes(n)) out.push(n);
  });
  return out;
}
