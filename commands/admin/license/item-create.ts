// itemCreateRun: `mkt admin item create ID --name N ...` — a marketplace item with its license
// settings: activation maximum, node-locked or floating seats (with their lease), deactivation budget.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NegativeError, UsageError } from '../../../src/cli/errors.js';
import { printFields, printJson } from '../../../src/cli/output.js';
import { parseBudget, parseMax, parseSeconds, withAdmin, type AdminFlags } from './shared.js';

export interface ItemCreateOptions extends AdminFlags {
  id: string;
  name: string;
  licenseTemplate?: string;
  maxActivations?: string;
  verification?: string;
  activation?: string;
  lease?: string;
  maxDeactivations?: string;
  per?: string;
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
  const activation = opts.activation ?? 'node-locked';
  if (activation !== 'node-locked' && activation !== 'floating') throw new UsageError(`--activation must be node-locked or floating, not ${JSON.stringify(activation)}`);
  const leaseSeconds = parseSeconds('--lease', opts.lease) ?? null;
  if (activation === 'floating' && leaseSeconds === null) throw new UsageError('--activation floating needs --lease (how long a seat is held without a heartbeat, e.g. 15m)');
  if (activation === 'node-locked' && leaseSeconds !== null) throw new UsageError('--lease is for floating items (add --activation floating)');
  const budget = parseBudget(opts.maxDeactivations, opts.per);
  const max = parseMax(opts.maxActivations) ?? null;
  const item = await withAdmin(opts, (admin) =>
    admin.createItem({ id: opts.id, name: opts.name.trim(), licenseTemplate: template, maxActivations: max, verification: verification === 'on', activation, leaseSeconds, ...budget }),
  );
  if (!item) throw new NegativeError(`item ${opts.id} exists already`);
  if (opts.json) printJson(opts.factory.io, item);
  else
    printFields(opts.factory.io, [
      ['id', item.id],
      ['name', item.name],
      ['license text', item.license_template === null ? 'none' : `${item.license_template.length} characters`],
      [item.activation_policy === 'floating' ? 'seats' : 'max activations', item.max_activations ?? 'unlimited'],
      ['activation', item.activation_policy === 'floating' ? `floating (lease ${item.lease_seconds} s)` : 'node-locked'],
      ['deactivations', item.max_deactivations === null ? 'unlimited' : `${item.max_deactivations} per ${item.deactivation_window_seconds} s`],
      ['verification', item.verification_enabled ? 'on' : 'off'],
    ]);
}
