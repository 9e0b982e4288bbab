// itemCreateRun: `mkt admin item create ID --name N ...` — a marketplace item with its license settings.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { printFields, printJson } from '../../../src/cli/output.js';
import { parseMax, withAdmin, type AdminFlags } from './shared.js';

export interface ItemCreateOptions extends AdminFlags {
  id: string;
  name: string;
  licenseTemplate?: string;
  maxActivations?: string;
  verification?: string;
}

export async function itemCreateRun(opts: ItemCreateOptions): Promise<void> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(opts.id)) throw new UsageError(`item id must be letters, digits, '.', '_' or '-' (at most 100), not ${JSON.stringify(opts.id)}`);
  if (opts.name.trim() === '') throw new UsageError('--name must not be empty');
  const verification = opts.verification ?? 'off';
  if (verification !== 'on' && verification !== 'off') throw new UsageError(`--verification must be on or off, not ${JSON.stringify(verification)}`);
  let template: string | null = null;
  if (opts.licenseTemplate !== undefined) {
    try {
      template = readFileSync(resolve(opts.factory.io.cwd, opts.licenseTemplate), 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --license-template ${opts.licenseTemplate}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  const max = parseMax(opts.maxActivations) ?? null;
  const item = await withAdmin(opts, (admin) => admin.createItem({ id: opts.id, name: opts.name.trim(), licenseTemplate: template, maxActivations: max, verification: verification === 'on' }));
  if (!item) throw new NegativeError(`item ${opts.id} exists already`);
  if (opts.json) printJson(opts.factory.io, item);
  else
    printFields(opts.factory.io, [
      ['id', item.id],
      ['name', item.name],
      ['license text', item.license_template === null ? 'none' : `${item.license_template.length} characters`],
      ['max activations', item.max_activations ?? 'unlimited'],
      ['verification', item.verification_enabled ? 'on' : 'off'],
    ]);
}
