// Parse-level tests of `mkt tickets` (gh's runF): each flag reaches its verb's options
// (CreateOptions, ListOptions, ...) under its name; repeatable flags collect; usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { commentRun } from '../../../commands/tickets/comment.js';
import type { createRun } from '../../../commands/tickets/create.js';
import type { deleteRun } from '../../../commands/tickets/delete.js';
import type { logRun } from '../../../commands/tickets/log.js';
import type { listRun } from '../../../commands/tickets/list.js';
import type { nodeRun } from '../../../commands/tickets/node.js';
import type { showRun } from '../../../commands/tickets/show.js';
import type { updateRun } from '../../../commands/tickets/update.js';
import { leafPaths, parseSuite } from '../../helpers/parse-cli.js';

const cli = parseSuite('tickets');
const FIELDS = ['--description', 'd', '--status', 'open', '--priority', 'high', '--channel', 'phone', '--source', 'mailbox', '--requester', 'ana', '--assignee', 'bo'];
const fields = { description: 'd', status: 'open', priority: 'high', channel: 'phone', source: 'mailbox', requester: 'ana', assignee: 'bo' };

describe('mkt tickets: parsing', () => {
  it('create: the title, every field flag, --tag repeated, --server, --json', async () => {
    await cli.verb<typeof createRun>('tickets create', ['Printer on fire'], { title: 'Printer on fire' });
    await cli.verb<typeof createRun>('tickets create', ['T', ...FIELDS, '--tag', 'a', '--tag', 'b', '--server', 'http://h:1', '--json'], {
      title: 'T',
      ...fields,
      tag: ['a', 'b'],
      server: 'http://h:1',
      json: true,
    });
    await cli.usage(['tickets', 'create'], /missing required argument 'title'/);
    await cli.usage(['tickets', 'create', 'T', '--title', 'x'], /unknown option '--title'/);
  });

  it('list: filters, paging and --all', async () => {
    await cli.verb<typeof listRun>('tickets list', [], {});
    await cli.verb<typeof listRun>(
      'tickets list',
      ['--status', 'open', '--priority', 'low', '--channel', 'web', '--source', 's', '--search', 'vpn timeout', '--limit', '20', '--cursor', 'c1', '--all', '--server', 'u', '--json'],
      { status: 'open', priority: 'low', channel: 'web', source: 's', search: 'vpn timeout', limit: '20', cursor: 'c1', all: true, server: 'u', json: true },
    );
    await cli.usage(['tickets', 'list', 'extra'], /too many arguments/);
  });

  it('list: --assignee and --requester filters (issue 30), values as typed', async () => {
    await cli.verb<typeof listRun>('tickets list', ['--assignee', 'bo', '--requester', 'none'], { assignee: 'bo', requester: 'none' });
    await cli.verb<typeof listRun>('tickets list', ['--assignee', '', '--requester', '*'], { assignee: '', requester: '*' });
    await cli.usage(['tickets', 'list', '--assignee'], /option '--assignee <who>' argument missing/);
  });

  it('status, priority and channel: the schema\'s lists as commander choices, spelled as the server parses them', async () => {
    await cli.verb<typeof listRun>('tickets list', ['--status', 'On Hold', '--priority', 'URGENT', '--channel', 'Web'], { status: 'on_hold', priority: 'urgent', channel: 'web' });
    await cli.usage(['tickets', 'list', '--status', 'bogus'], /argument 'bogus' is invalid\. Allowed choices are open, pending, on_hold, solved, closed\./);
    await cli.usage(['tickets', 'update', 'x', '--priority', 'meh'], /Allowed choices are low, normal, high, urgent\./);
    await cli.usage(['tickets', 'create', 'T', '--channel', 'fax'], /Allowed choices are email, web, chat, phone, api\./);
  });

  it('show: the id', async () => {
    await cli.verb<typeof showRun>('tickets show', ['3f2a9c1e', '--server', 'u', '--json'], { id: '3f2a9c1e', server: 'u', json: true });
    await cli.usage(['tickets', 'show'], /missing required argument 'id'/);
  });

  it('update: the id, every field flag, --title, --tag repeated', async () => {
    await cli.verb<typeof updateRun>('tickets update', ['3f2a9c1e', ...FIELDS, '--title', 'New', '--tag', 'x', '--tag', 'y', '--tag', 'z', '--server', 'u', '--json'], {
      id: '3f2a9c1e',
      ...fields,
      title: 'New',
      tag: ['x', 'y', 'z'],
      server: 'u',
      json: true,
    });
    await cli.verb<typeof updateRun>('tickets update', ['3f2a9c1e'], { id: '3f2a9c1e' });
    await cli.verb<typeof updateRun>('tickets update', ['3f2a9c1e', '--assignee', ''], { id: '3f2a9c1e', assignee: '' });
    await cli.usage(['tickets', 'update'], /missing required argument 'id'/);
  });

  it('update: --add-tag and --remove-tag repeated; either with --tag is a usage error', async () => {
    await cli.verb<typeof updateRun>('tickets update', ['3f2a9c1e', '--add-tag', 'a', '--add-tag', 'b', '--remove-tag', 'c'], { id: '3f2a9c1e', addTag: ['a', 'b'], removeTag: ['c'] });
    await cli.usage(['tickets', 'update', '3f2a9c1e', '--tag', 'a', '--add-tag', 'b'], /option '--add-tag <tag>' cannot be used with option '--tag <tag>'/);
    await cli.usage(['tickets', 'update', '3f2a9c1e', '--remove-tag', 'b', '--tag', 'a'], /option '--tag <tag>' cannot be used with option '--remove-tag <tag>'|option '--remove-tag <tag>' cannot be used with option '--tag <tag>'/);
    await cli.usage(['tickets', 'create', 'T', '--add-tag', 'a'], /unknown option '--add-tag'/);
  });

  it('comment: the id and the text (or -), --author, --server, --json', async () => {
    await cli.verb<typeof commentRun>('tickets comment', ['3f2a9c1e', 'Called back'], { id: '3f2a9c1e', text: 'Called back' });
    await cli.verb<typeof commentRun>('tickets comment', ['3f2a9c1e', '-', '--author', 'bo', '--server', 'u', '--json'], { id: '3f2a9c1e', text: '-', author: 'bo', server: 'u', json: true });
    await cli.usage(['tickets', 'comment', '3f2a9c1e'], /missing required argument 'text'/);
    await cli.usage(['tickets', 'comment', '3f2a9c1e', 'a', 'b'], /too many arguments/);
    await cli.usage(['tickets', 'comment', '3f2a9c1e', 'a', '--author'], /option '--author <name>' argument missing/);
  });

  it('delete: the id, --yes, --server; no --json (it prints no data)', async () => {
    await cli.verb<typeof deleteRun>('tickets delete', ['3f2a9c1e'], { id: '3f2a9c1e' });
    await cli.verb<typeof deleteRun>('tickets delete', ['3f2a9c1e', '--yes', '--server', 'u'], { id: '3f2a9c1e', yes: true, server: 'u' });
    await cli.usage(['tickets', 'delete'], /missing required argument 'id'/);
    await cli.usage(['tickets', 'delete', '3f2a9c1e', '--json'], /unknown option '--json'/);
  });

  it('log: the id, --limit, --all, --server, --json', async () => {
    await cli.verb<typeof logRun>('tickets log', ['3f2a9c1e'], { id: '3f2a9c1e' });
    await cli.verb<typeof logRun>('tickets log', ['3f2a9c1e', '--limit', '20', '--all', '--server', 'u', '--json'], { id: '3f2a9c1e', limit: '20', all: true, server: 'u', json: true });
    await cli.usage(['tickets', 'log'], /missing required argument 'id'/);
    await cli.usage(['tickets', 'log', '3f2a9c1e', '--limit'], /option '--limit <n>' argument missing/);
  });

  it('node: --server and --json', async () => {
    await cli.verb<typeof nodeRun>('tickets node', ['--server', 'http://10.0.0.2:7072', '--json'], { server: 'http://10.0.0.2:7072', json: true });
    await cli.usage(['tickets', 'node', '--jsn'], /unknown option '--jsn'/);
  });

  it('every verb of mkt tickets has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('tickets'));
  });
});
