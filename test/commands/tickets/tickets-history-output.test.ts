// Units of the issue 34 verbs that need no server: the delete confirmation (an injected input
// stream), the history lines of `mkt tickets log`, and the comments after `mkt tickets show`.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { canAsk, confirm, isYes } from '../../../commands/tickets/confirm.js';
import { changeText } from '../../../commands/tickets/log.js';
import { printComments } from '../../../commands/tickets/shared.js';
import { run } from '../../../commands/root/run.js';
import { HISTORY_LIMIT } from '../../../src/client/tickets.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { freePort } from '../../helpers/wait.js';

/** A terminal-like stdin the test types into, and the question's stderr. */
function terminal(): { io: ReturnType<typeof fakeIO>; stdin: PassThrough & { isTTY?: boolean } } {
  const io = fakeIO();
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = true;
  io.stdin = stdin;
  return { io, stdin };
}

describe('the delete confirmation (commands/tickets/confirm.ts)', () => {
  it('y and yes in any case say yes; an empty line, n, or other words say no', () => {
    for (const a of ['y', 'Y', 'yes', 'YES', ' yes ', 'y\r']) expect(isYes(a), JSON.stringify(a)).toBe(true);
    for (const a of ['', 'n', 'no', 'yep', 'y y', 'ye', 'sure']) expect(isYes(a), JSON.stringify(a)).toBe(false);
  });

  it('asks on stderr, reads one line from stdin, and leaves the rest unread', async () => {
    const { io, stdin } = terminal();
    const answer = confirm(io, 'Delete ticket 3f2a9c1e "Printer on fire"?');
    stdin.write('y');
    stdin.write('es\nmore input');
    expect(await answer).toBe(true);
    expect(io.err()).toBe('Delete ticket 3f2a9c1e "Printer on fire"? [y/N] ');
    expect(stdin.isPaused()).toBe(true);
    expect(stdin.listenerCount('data')).toBe(0);
  });

  it('an empty line is no; end of input without a line is no', async () => {
    const first = terminal();
    const empty = confirm(first.io, 'Delete?');
    first.stdin.write('\n');
    expect(await empty).toBe(false);
    const second = terminal();
    const ended = confirm(second.io, 'Delete?');
    second.stdin.end();
    expect(await ended).toBe(false);
    expect(second.io.err()).toBe('Delete? [y/N] \n');
  });

  it('can ask only when stdin is a terminal (stderr alone is not enough)', () => {
    const { io } = terminal();
    expect(canAsk(io)).toBe(true);
    const piped = fakeIO();
    piped.stderr.isTTY = true;
    expect(canAsk(piped)).toBe(false);
  });

  it('delete without a terminal and without --yes exits 2 in one line, before any request', async () => {
    // An unreachable server: a request would exit 3.
    const io = fakeIO({ env: { MKT_TICKETS_URL: `http://127.0.0.1:${await freePort()}`, MKT_TICKETS_TOKEN: 't' } });
    expect(await run(['tickets', 'delete', '3f2a9c1e'], io)).toBe(2);
    expect(io.err()).toBe('mkt: not deleting ticket 3f2a9c1e without confirmation: stdin is not a terminal; pass --yes\n');
    expect(io.out()).toBe('');
  });
});

describe('mkt tickets log: one line per change', () => {
  const at = '2026-11-29T10:00:00.000Z';
  const by = '0a1b2c3d-0000-4000-8000-000000000001';
  it('a field change is `at by field: from → to`; none is (none); a lost change says so', () => {
    expect(changeText({ field: 'status', from: 'open', to: 'solved', at, by })).toBe(`${at} 0a1b2c3d status: open → solved`);
    expect(changeText({ field: 'assignee', from: null, to: 'bo', at, by, lost: true })).toBe(`${at} 0a1b2c3d assignee: (none) → bo (lost a merge)`);
  });

  it('tags, the creation, comments and the delete are said shorter', () => {
    expect(changeText({ field: 'tags', from: null, to: 'vpn', at, by })).toBe(`${at} 0a1b2c3d tags: + vpn`);
    expect(changeText({ field: 'tags', from: 'vpn', to: null, at, by })).toBe(`${at} 0a1b2c3d tags: - vpn`);
    expect(changeText({ field: 'created', from: null, to: 'Printer on fire', at, by })).toBe(`${at} 0a1b2c3d created: Printer on fire`);
    expect(changeText({ field: 'comment', from: null, to: '9e8d7c6b-1111-4000-8000-000000000002', at, by })).toBe(`${at} 0a1b2c3d comment: 9e8d7c6b-1111-4000-8000-000000000002`);
    expect(changeText({ field: 'deleted', from: null, to: null, at, by })).toBe(`${at} 0a1b2c3d deleted`);
  });

  it('values from peers cannot drive the terminal; blanks show quoted, long text is cut', () => {
    const line = changeText({ field: 'title', from: 'a\u001b[2J\nb', to: '  ', at, by });
    expect(line).toBe(`${at} 0a1b2c3d title: a\\x1b[2J b → "  "`);
    const long = changeText({ field: 'description', from: '', to: 'x'.repeat(500), at, by });
    expect(long).toBe(`${at} 0a1b2c3d description: "" → ${'x'.repeat(59)}…`);
  });

  it("--limit's help names the client's HISTORY_LIMIT (the index keeps its own copy for a light --help)", async () => {
    const io = fakeIO();
    await run(['tickets', 'log', '--help'], io);
    expect(io.out()).toContain(`changes per page, 1 to ${HISTORY_LIMIT.max} (server default: ${HISTORY_LIMIT.default})`);
  });
});

describe('mkt tickets show: the comments after the ticket', () => {
  const comments = [
    { id: '11111111-aaaa-4000-8000-000000000001', body: 'first line\nsecond\u001b]0;x\u0007', author: 'ana', created_at: '2026-11-29T10:00:00.000Z' },
    { id: '22222222-bbbb-4000-8000-000000000002', body: 'ok', author: 'bo', created_at: '2026-11-29T11:00:00.000Z' },
  ];
  it('on a terminal: author, time and short id, then the body indented, its lines kept and escapes shown', () => {
    const io = fakeIO({ tty: true });
    printComments(io, comments);
    expect(io.out()).toBe('\nana, 2026-11-29T10:00:00.000Z (11111111):\n    first line\n    second\\x1b]0;x\\x07\n\nbo, 2026-11-29T11:00:00.000Z (22222222):\n    ok\n');
  });

  it('in a pipe: one TSV line each, `comment`, id, author, time, body on one line', () => {
    const io = fakeIO();
    printComments(io, comments);
    expect(io.out().split('\n')).toEqual([
      'comment\t11111111-aaaa-4000-8000-000000000001\tana\t2026-11-29T10:00:00.000Z\tfirst line second\\x1b]0;x\\x07',
      'comment\t22222222-bbbb-4000-8000-000000000002\tbo\t2026-11-29T11:00:00.000Z\tok',
      '',
    ]);
  });
});
