// textRun: `mkt license text ITEM` — prints the item's rendered license text.
import type { Factory } from '../../src/cli/factory.js';
import { call, licenseClient, readKey, type KeyFlags } from './shared.js';

export interface TextOptions extends KeyFlags {
  factory: Factory;
  item: string;
  server?: string;
}

export async function textRun(opts: TextOptions): Promise<void> {
  // The key only personalises the text, so it is optional here and never prompted for.
  const key = await readKey(opts.factory, opts, { optional: true });
  const client = await licenseClient(opts.factory, opts);
  const text = await call(() => client.text(opts.item, key));
  opts.factory.io.stdout.write(text.endsWith('\n') ? text : text + '\n');
}
