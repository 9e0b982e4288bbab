// webhookAddRun: `mkt admin webhook add URL --events PATTERNS` — license events POSTed to URL,
// signed with a secret printed here once (the receiver keeps it; no listing shows it again).
import { printJson } from '../../../src/cli/output.js';
import { withAuditAdmin, type AdminFlags } from './shared.js';

export interface WebhookAddOptions extends AdminFlags {
  url: string;
  events: string;
}

export async function webhookAddRun(opts: WebhookAddOptions): Promise<void> {
  const w = await withAuditAdmin(opts, (admin) => admin.addWebhook(opts.url, opts.events));
  const io = opts.factory.io;
  if (opts.json) {
    printJson(io, w);
    return;
  }
  io.stderr.write(`added webhook ${w.id} for ${w.url} (events: ${w.events.join(', ')}); its signing secret, shown only this once:\n`);
  io.stdout.write(`${w.secret}\n`);
}
