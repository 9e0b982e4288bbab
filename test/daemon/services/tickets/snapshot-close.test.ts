// A peer that sends its snapshot and closes the connection (`Connection: close`) while the
// receiver is still writing it to disk must not crash the node. undici's HTTP/1 parser, once a
// lagging consumer has paused it, throws an uncatchable AssertionError when the socket ends
// (nodejs/undici#5360); the hostile-snapshot fuzz found an empty node dying of it. The download
// runs in a child process here, so a crash is a failed test and not the test runner's own death.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from '../../../helpers/tmp.js';

const root = join(import.meta.dirname, '../../../..');

/** The child: a raw TCP peer answering 8 MiB then FIN, and three downloads from it. */
const SCRIPT = `
const { createServer } = require('node:net');
const { join } = require('node:path');
(async () => {
  const { bootstrapFromSnapshot } = await import(${JSON.stringify(join(root, 'daemon/services/tickets/bootstrap.ts'))});
  const { SqliteTicketStore } = await import(${JSON.stringify(join(root, 'src/store/tickets.ts'))});
  const { HybridClock } = await import(${JSON.stringify(join(root, 'daemon/services/tickets/hybrid-clock.ts'))});
  const size = 8 * 1024 * 1024;
  const server = createServer((sock) => sock.once('data', () => {
    sock.write('HTTP/1.1 200 OK\\r\\nContent-Type: application/vnd.sqlite3\\r\\nContent-Length: ' + size + '\\r\\nConnection: close\\r\\n\\r\\n');
    sock.write(Buffer.alloc(size, 0x61));
    sock.end();
  }));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const dir = process.argv[1];
  const store = new SqliteTicketStore(join(dir, 'tickets.db'));
  for (let i = 0; i < 3; i++) {
    await bootstrapFromSnapshot({ store, hlc: new HybridClock(() => Date.now()), peer: 'http://127.0.0.1:' + server.address().port, token: 't', dir, nodeId: 'n', now: Date.now(), maxSkewMs: 300000 })
      .then(() => console.log('adopted?'), (err) => console.log('refused: ' + err.message));
  }
  server.close();
  await store.close();
})();
`;

describe('a snapshot peer that closes the connection after its body', () => {
  it('is refused as junk, three times over, and the node lives', async () => {
    const dir = tempDir();
    try {
      const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', '-e', SCRIPT, dir.path], { cwd: root, timeout: 120_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
      });
      expect(out.stderr).not.toMatch(/AssertionError/);
      expect(out.code).toBe(0);
      expect(out.stdout.trim().split('\n')).toEqual(Array(3).fill('refused: the snapshot is not an SQLite database: file is not a database'));
    } finally {
      dir.remove();
    }
  });
});
