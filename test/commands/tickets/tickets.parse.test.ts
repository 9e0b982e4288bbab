// Parse-level tests of `mkt tickets` (gh's runF): each flag reaches its verb's options
// (CreateOptions, ListOptions, ...) under its name; repeatable flags collect; usage errors exit 2.
import { describe, expect, it } from 'vitest';
import type { createRun } from '../../../commands/tickets/create.js';
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
    await cli.usage(['tickets', 'update'], /missing required argument 'id'/);
  });

  it('node: --server and --json', async () => {
    await cli.verb<typeof nodeRun>('tickets node', ['--server', 'http://10.0.0.2:7072', '--json'], { server: 'http://10.0.0.2:7072', json: true });
    await cli.usage(['tickets', 'node', '--jsn'], /unknown option '--jsn'/);
  });

  it('every verb of mkt tickets has its parse case', () => {
    expect(cli.covered()).toEqual(leafPaths('tickets'));
  });
});
