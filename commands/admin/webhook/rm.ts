// webhookRmRun: `mkt admin webhook rm ID` — stops sending to a webhook and drops what it still had to receive.
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { withAuditAdmin, type AdminFlags } from './shared.js';

export interface WebhookRmOptions extends AdminFlags {
  id: string;
}

export async function webhookRmRun(opts: WebhookRmOptions): Promise<void> {
  if (!/^wh_[0-9a-f]+$/.test(opts.id)) throw new UsageError(`a webhook id looks like wh_3f9a0c2d7e1b4a5c6d7e (see \`mkt admin webhook list\`), not ${JSON.stringify(opts.id)}`);
  if (!(await withAuditAdmin(opts, (admin) => admin.removeWebhook(opts.id)))) throw new NegativeError(`no such webhook: ${opts.id}`);
  opts.factory.io.stdout.write(`removed ${opts.id}\n`);
}
