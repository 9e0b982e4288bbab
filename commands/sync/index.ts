// `mkt sync ...`: the end-to-end-encrypting client of the marketplace sync API. Everything is
// sealed on this device; the server only ever sees ciphertext, sizes and the plaintext hashes
// that name blobs. Verbs load lazily inside their actions.
import type { Command } from 'commander';
import type { Factory } from '../../src/cli/factory.js';
import { jsonOption, runVerb, serverOption, type ParsedVerb } from '../../src/cli/flags.js';

type Opts = Record<string, unknown>;

function client(cmd: Command, json = true): Command {
  cmd.addOption(serverOption('marketplace'));
  if (json) cmd.addOption(jsonOption());
  return cmd;
}
function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}`);
}

export function register(program: Command, f: Factory, runF?: ParsedVerb): void {
  const sync = program
    .command('sync')
    .description('end-to-end-encrypted sync: changelog, blobs, keys, devices and storage plans');
  examples(sync, 'printf "%s\\n" "$PASSWORD" | mkt sync login --app-key app_pk_123 --email ada@example.com', 'mkt sync pull | jq -c .data');

  examples(
    client(sync.command('login').description('sign in (password from a hidden prompt or stdin), register this device, unlock the key'))
      .option('--app-key <key>', "the app's public API key (else $MKT_SYNC_APP_KEY)")
      .requiredOption('--email <email>', 'account email')
      .option('--device <name>', 'name of this device (default: the host name)'),
    'mkt sync login --app-key app_pk_123 --email ada@example.com --server https://market.example.com',
    'printf "%s\\n" "$PASSWORD" | mkt sync login --app-key app_pk_123 --email ada@example.com --device laptop',
  ).action(async (opts: Opts & { email: string }) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./login.js')).loginRun));

  examples(client(sync.command('logout').description('forget the token, keys and sync profile of this server on this device'), false), 'mkt sync logout', 'mkt sync logout --server https://market.example.com').action(
    async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./logout.js')).logoutRun),
  );
  examples(client(sync.command('account').description('show the signed-in account')), 'mkt sync account', 'mkt sync account --json | jq -r .email').action(async (opts: Opts) =>
    runVerb(runF, { factory: f, ...opts }, async () => (await import('./account.js')).accountRun),
  );
  examples(client(sync.command('status').description("the server's sync metadata and this device's local state")), 'mkt sync status', 'mkt sync status --json').action(async (opts: Opts) =>
    runVerb(runF, { factory: f, ...opts }, async () => (await import('./status.js')).statusRun),
  );

  const key = sync.command('key').description('the master key: create, fetch on another device, rotate');
  examples(key, 'mkt sync key init', 'mkt sync key rotate');
  examples(client(key.command('init').description('generate the master key, wrap it with your password (scrypt + secretbox), store it')), 'mkt sync key init', 'printf "%s\\n" "$PASSWORD" | mkt sync key init --json').action(
    async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./key-init.js')).keyInitRun),
  );
  examples(client(key.command('unlock').description('fetch the key envelope and open it with your password on this device')), 'mkt sync key unlock', 'printf "%s\\n" "$PASSWORD" | mkt sync key unlock').action(
    async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./key-unlock.js')).keyUnlockRun),
  );
  examples(
    client(key.command('rotate').description('rotate the master key and re-encrypt every entry; run again to resume after an interruption')),
    'mkt sync key rotate',
    'printf "%s\\n" "$PASSWORD" | mkt sync key rotate --json',
  ).action(async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./key-rotate.js')).keyRotateRun));
  examples(client(key.command('cancel-rotation').description('cancel a rotation idle for over 24 hours'), false), 'mkt sync key cancel-rotation', 'mkt sync key cancel-rotation --server https://market.example.com').action(
    async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./key-rotate.js')).keyCancelRun),
  );

  examples(
    client(sync.command('push').description('seal and push JSON lines {table, op, row_id, data} from FILE or stdin').argument('[file]', 'JSON lines file (`-` or none: stdin)')),
    'echo \'{"table":"notes","op":"upsert","row_id":"n1","data":{"title":"hi"}}\' | mkt sync push',
    'mkt sync push changes.jsonl --json',
  ).action(async (file: string | undefined, opts: Opts) => runVerb(runF, { factory: f, file, ...opts }, async () => (await import('./push.js')).pushRun));
  examples(
    client(
      sync
        .command('pull')
        .description('print decrypted JSON lines after the saved cursor (--json: one document {entries, count, cursor})')
        .option('--since <cursor>', 'start after this cursor instead (the saved cursor stays)'),
    ),
    'mkt sync pull',
    'mkt sync pull --since 0 | jq -c "select(.table == \\"notes\\")"',
    'mkt sync pull --json | jq .cursor',
  ).action(async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./pull.js')).pullRun));

  const blob = sync.command('blob').description('encrypted blobs named by the SHA-256 of their plaintext');
  examples(blob, 'mkt sync blob put photo.jpg', 'mkt sync blob get 9f86d0... -o photo.jpg');
  examples(client(blob.command('put').description('encrypt and upload FILE (multipart and resumable when large); prints its hash').argument('<file>')), 'mkt sync blob put video.mp4', 'HASH=$(mkt sync blob put notes.db)').action(
    async (file: string, opts: Opts) => runVerb(runF, { factory: f, file, ...opts }, async () => (await import('./blob-put.js')).blobPutRun),
  );
  examples(
    client(
      blob
        .command('get')
        .description('download, decrypt and verify a blob into FILE (`-o -`: stdout; a blob cut short or altered exits 1)')
        .argument('<hash>', 'SHA-256 of the plaintext')
        .option('-o, --output <file>', 'where to write it (`-` for stdout)'),
    ),
    'mkt sync blob get 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 -o notes.db',
    'mkt sync blob get "$HASH" -o - | tar -x',
    'mkt sync blob get "$HASH" -o /tmp/restore.bin --json',
  ).action(async (hash: string, opts: Opts) => runVerb(runF, { factory: f, hash, ...opts }, async () => (await import('./blob-get.js')).blobGetRun));

  const devices = sync.command('devices').description("the account's registered devices");
  examples(devices, 'mkt sync devices ls', 'mkt sync devices rm 3f2a...');
  examples(client(devices.command('ls').description('list devices')), 'mkt sync devices ls', 'mkt sync devices ls --json | jq -r ".[].name"').action(async (opts: Opts) =>
    runVerb(runF, { factory: f, ...opts }, async () => (await import('./devices.js')).devicesLsRun),
  );
  examples(
    client(devices.command('rename').description('rename this device (registers NAME, then removes the old registration: the id changes)').argument('<name>')),
    'mkt sync devices rename laptop',
    'mkt sync devices rename "ci runner" --json',
  ).action(async (name: string, opts: Opts) => runVerb(runF, { factory: f, name, ...opts }, async () => (await import('./devices.js')).devicesRenameRun));
  // The old name of `rename`, kept hidden for scripts: it warns on stderr, then renames.
  client(devices.command('add', { hidden: true }).description('deprecated: use `mkt sync devices rename NAME`').argument('<name>')).action(async (name: string, opts: Opts) =>
    runVerb(runF, { factory: f, name, ...opts }, async () => (await import('./devices.js')).devicesAddRun),
  );
  examples(client(devices.command('rm').description('remove a device, by id or a unique prefix of at least 8 characters').argument('<id>'), false), 'mkt sync devices rm 3f2a9c1e', 'mkt sync devices ls --json | jq -r ".[0].id" | xargs mkt sync devices rm').action(
    async (id: string, opts: Opts) => runVerb(runF, { factory: f, id, ...opts }, async () => (await import('./devices.js')).devicesRmRun),
  );

  const plan = sync.command('plan').description('paid storage: quote, buy, status, change the cap');
  examples(plan, 'mkt sync plan quote --cap 50GiB --annual', 'mkt sync plan buy --cap 50GiB --open');
  const capped = (c: Command): Command => c.option('--cap <size>', 'storage cap: 50GiB, 500MB, 1TiB or bytes').option('--annual', 'yearly billing (default monthly)');
  examples(client(capped(plan.command('quote').description('price of a cap, computed locally and checked against the server'))), 'mkt sync plan quote --cap 50GiB', 'mkt sync plan quote --cap 1TiB --annual --json').action(
    async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./plan.js')).planQuoteRun),
  );
  examples(client(capped(plan.command('buy').description('start a checkout; prints (or --open opens) its URL')).option('--open', 'open the URL in a browser')), 'mkt sync plan buy --cap 50GiB', 'mkt sync plan buy --cap 100GiB --annual --open').action(
    async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./plan.js')).planBuyRun),
  );
  examples(client(plan.command('status').description('the subscription (active false when there is none)')), 'mkt sync plan status', 'mkt sync plan status --json | jq .active').action(async (opts: Opts) =>
    runVerb(runF, { factory: f, ...opts }, async () => (await import('./plan.js')).planStatusRun),
  );
  examples(client(plan.command('cap').description('change the cap from the next billing cycle').option('--cap <size>', 'new storage cap')), 'mkt sync plan cap --cap 100GiB', 'mkt sync plan cap --cap 20GiB --json').action(
    async (opts: Opts) => runVerb(runF, { factory: f, ...opts }, async () => (await import('./plan.js')).planCapRun),
  );
}
