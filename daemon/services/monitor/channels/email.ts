// Email through nodemailer: `smtps://` is TLS from the first byte, `smtp://` upgrades with
// STARTTLS when the server offers it. A subject naming the label (one line) and the transition,
// a plain-text body with the details. The password comes from the URL or an environment variable.
import { createTransport } from 'nodemailer';
import type { EmailChannel } from '../../../../src/config/monitor-alerts.js';
import type { AlertEvent } from '../alert-event.js';
import { SendError } from './http.js';
import { detailLines, headline, type SendContext } from './text.js';

/** `[mkt] API is down`: the label has no control characters left (no header injection). */
export function emailSubject(e: AlertEvent): string {
  return `[mkt] ${headline(e)}`;
}

/** The SMTP transport's settings from the channel: host, port, TLS mode and credentials. */
export function smtpSettings(ch: EmailChannel, ctx: Pick<SendContext, 'env' | 'timeoutMs' | 'tlsCa'>): { host: string; port: number; secure: boolean; auth?: { user: string; pass: string } } {
  const u = new URL(ch.smtp);
  const secure = u.protocol === 'smtps:';
  const user = decodeURIComponent(u.username);
  let pass = decodeURIComponent(u.password);
  if (ch.smtpPasswordEnv !== undefined) {
    const v = ctx.env[ch.smtpPasswordEnv];
    if (v === undefined || v === '') throw new SendError(`the environment variable ${ch.smtpPasswordEnv} (smtp_password_env) is not set`);
    pass = v;
  }
  return { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port ? Number(u.port) : secure ? 465 : 587, secure, ...(user ? { auth: { user, pass } } : {}) };
}

export async function sendEmail(ch: EmailChannel, e: AlertEvent, ctx: SendContext): Promise<void> {
  const s = smtpSettings(ch, ctx);
  const transport = createTransport({
    ...s,
    // Each phase bounded; the whole send is bounded below as well.
    connectionTimeout: ctx.timeoutMs,
    greetingTimeout: ctx.timeoutMs,
    socketTimeout: ctx.timeoutMs,
    ...(ctx.tlsCa ? { tls: { ca: ctx.tlsCa } } : {}),
    logger: false,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      transport.sendMail({ from: ch.from, to: ch.to, subject: emailSubject(e), text: `${detailLines(e, ctx).join('\n')}\n\n-- \nmkt monitor ${e.instance}\n`, headers: { 'auto-submitted': 'auto-generated' } }),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new SendError(`no answer within ${ctx.timeoutMs} ms`)), ctx.timeoutMs))),
    ]);
  } catch (err) {
    if (err instanceof SendError) throw err;
    // nodemailer's messages name the step and the server's answer (`Invalid login: 535 ...`), never the password.
    const x = err as Error & { code?: string; responseCode?: number };
    throw new SendError(`SMTP ${x.code ?? 'error'}${x.responseCode ? ` ${x.responseCode}` : ''}: ${x.message.split('\n')[0]!.slice(0, 300)}`);
  } finally {
    clearTimeout(timer);
    transport.close();
  }
}
