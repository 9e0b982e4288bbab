// The README's "first five minutes" run as a reader runs them (issue 30, "Done means"): every
// ```sh block of that section, in order, through bash, with the built bin/mkt as `mkt`; each
// line's exit status and every text its comment quotes are checked, so the README and the
// program cannot drift apart unnoticed. Needs `npm run build` (npm test builds first).
//
// Ports: the tour runs unchanged, on the default ports its text names (7070, 7071, 7072).
// Rewriting them to free ports would test another text than the reader's (`mkt auth login
// tickets < tickets/token` relies on the default URL), so where Linux allows it the script gets a
// network namespace of its own (unshare --user --net, loopback up): the default ports are then
// free whatever else this machine runs, and nothing outside can reach the tour's servers. Where
// no namespace can be made (another OS, user namespaces switched off), the tour runs on the
// host's ports and fails at once, naming the port, when one is taken.
//
// Servers (`mkt serve ...`, which the README runs in a terminal of their own or with `&`) start in
// the background as written; the script goes on once each printed `listening on` (bounded by a
// deadline, never a sleep) and stops them with SIGTERM at the end, also after a failure.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_PORTS } from '../../src/config/services.js';
import { VERSION } from '../../src/version.js';
import { promises, runWalkthrough, splitComment, tourBlocks, tourCommands, tourPorts, type WalkthroughResult } from '../helpers/readme-walkthrough.js';

const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

/** The failure first, then the transcript: what the reader would have seen up to it. */
function report(r: WalkthroughResult): string {
  return `${r.failure ?? 'ok'}\n\n${r.transcript.split('\n').slice(-80).join('\n')}`;
}

describe('README walkthrough: the first five minutes as written', () => {
  it('reads the whole tour: the scratch directory, then the marketplace, monitor and tickets walk-throughs', () => {
    const blocks = tourBlocks(readme);
    expect(blocks.length).toBeGreaterThanOrEqual(7);
    const commands = tourCommands(readme);
    expect(commands[0]!.code).toMatch(/^mkdir \S+ && cd \S+$/);
    const served = commands.filter((c) => c.serve).map((c) => c.code.split(/\s+/)[2]);
    expect(served).toEqual(['marketplace', 'monitor', 'tickets']);
    // Each server's line quotes the line it prints once it listens: the script waits for it.
    for (const c of commands.filter((x) => x.serve)) expect(c.prints.some((p) => p.startsWith('listening on http://')), c.shown).toBe(true);
    // The tour's URLs are the programs' default ports, which is what lets it omit --server.
    expect(tourPorts(readme)).toEqual(Object.values(DEFAULT_PORTS).sort());
  });

  it('every command runs, exits as its comment says and prints what its comment quotes; the servers stop cleanly', async () => {
    const r = await runWalkthrough(readme, { timeoutMs: 540_000 });
    expect(r.failure, report(r)).toBeUndefined();
    expect(r.status, report(r)).toBe(0);
    expect(r.transcript).toContain('the walkthrough ran to its end');
    // "stops cleanly on SIGTERM" (README, Running the servers), for each of the three.
    expect(r.stopped).toEqual([0, 0, 0]);
    expect(r.leftover).toEqual([]);
    expect(existsSync(r.scratch)).toBe(false);
  }, 600_000);
});

/** A README holding only a tour made of `lines`. */
const tour = (...lines: string[]): string => `# t\n\n## The first five minutes\n\n\`\`\`sh\n${lines.join('\n')}\n\`\`\`\n\n## Next\n\n\`\`\`sh\nfalse\n\`\`\`\n`;

describe('README walkthrough: the comment convention', () => {
  it('a comment is a `#` starting a word outside quotes', () => {
    expect(splitComment(`echo "a # b" 'c#d' e#f # "x"`)).toEqual({ code: `echo "a # b" 'c#d' e#f`, comment: '"x"' });
    expect(splitComment('mkt tickets list')).toEqual({ code: 'mkt tickets list' });
  });

  it('`exit N` at its start is the status, quoted texts are output, the rest is prose', () => {
    expect(promises('exit 1: "MALFORMED_KEY" on stderr')).toEqual({ exit: 1, prints: ['MALFORMED_KEY'] });
    expect(promises('status exits 1 when a target is degraded or down')).toEqual({ exit: 0, prints: [] });
    expect(promises('"listening on http://127.0.0.1:7071"; the first check runs at once')).toEqual({ exit: 0, prints: ['listening on http://127.0.0.1:7071'] });
    expect(promises(undefined)).toEqual({ exit: 0, prints: [] });
  });

  it('a heredoc stays one command with its body; blocks after the section are not the tour', () => {
    const cmds = tourCommands(tour(`cat > x.yaml <<'EOF'`, 'a: 1 # not a comment', 'EOF', 'cat x.yaml   # "a: 1"', '', '# a note to the reader'));
    expect(cmds.map((c) => [c.line, c.code])).toEqual([
      [6, `cat > x.yaml <<'EOF'\na: 1 # not a comment\nEOF`],
      [9, 'cat x.yaml'],
    ]);
  });
});

describe('README walkthrough: drift fails it', () => {
  it('passes a tour the program keeps (and removes its scratch directory)', async () => {
    const r = await runWalkthrough(tour(`mkt --version   # "${VERSION}"`, 'mkt auth logout tickets   # exit 1: "not logged in to tickets"', `cat > x.yaml <<'EOF'`, 'a: 1', 'EOF', 'cat x.yaml   # "a: 1"'));
    expect(r.failure, report(r)).toBeUndefined();
    expect(existsSync(r.scratch)).toBe(false);
  });

  it('a quoted text the command does not print fails, naming the README line', async () => {
    const r = await runWalkthrough(tour('mkt --version   # "0.0.0-drifted"'));
    expect(r.failure).toBe(`README.md:6: the output lacks "0.0.0-drifted", which the README's comment quotes`);
  });

  it('an exit status other than the comment says fails, and one the comment does not give must be 0', async () => {
    expect((await runWalkthrough(tour('mkt auth logout tickets   # exit 0: logged out'))).failure).toBe('README.md:6: exit 1, where the README expects 0');
    expect((await runWalkthrough(tour('mkt --version', 'mkt auth logout tickets'))).failure).toBe('README.md:7: exit 1, where the README expects 0');
    expect((await runWalkthrough(tour('mkt --version   # exit 1'))).failure).toBe('README.md:6: exit 0, where the README expects 1');
  });

  it('a server that exits before it listens fails; a server started before a failure is stopped', async () => {
    const early = await runWalkthrough(tour('mkt serve nope'));
    expect(early.failure).toBe(`README.md:6: the server exited before it printed 'listening on'`);
    // Written with the `&` the README allows, which the script's own backgrounding must not double.
    const r = await runWalkthrough(tour('mkt serve tickets --port 0 --data-dir t &   # "listening on http://127.0.0.1:"', 'mkt tickets list --server http://127.0.0.1:1   # "nothing"'));
    expect(r.failure, report(r)).toMatch(/^README\.md:7: exit 3, where the README expects 0$/);
    expect(r.stopped).toEqual([0]);
    expect(r.leftover).toEqual([]);
    expect(existsSync(r.scratch)).toBe(false);
  });

  it('without a network namespace, a default port another process holds (past the wait) fails, naming it', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await runWalkthrough(tour(`mkt serve tickets --port ${port}   # "listening on http://127.0.0.1:${port}"`), { isolate: false, busyPortWaitMs: 0 });
      expect(r.failure).toMatch(new RegExp(`^port ${port} is in use on this machine`));
      expect(r.transcript).toBe('');
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});
