// commentRun: `mkt tickets comment ID TEXT|-` — adds a comment to a ticket and prints it.
import type { Factory } from '../../src/cli/factory.js';
import { callApi } from '../../src/cli/api-errors.js';
import { UsageError } from '../../src/cli/errors.js';
import { readAll } from '../../src/cli/io.js';
import { printFields, printJson } from '../../src/cli/output.js';
import { checkTicketId, ticketsClient, type ClientFlags } from './shared.js';

export interface CommentOptions extends ClientFlags {
  factory: Factory;
  id: string;
  /** The body, or `-` for stdin. */
  text: string;
  author?: string;
}

export async function commentRun(opts: CommentOptions): Promise<void> {
  const { io } = opts.factory;
  const id = checkTicketId(opts.id);
  // One trailing newline is the pipe's (`echo`, a heredoc), not the writer's: dropped as for --description -.
  const body = opts.text === '-' ? (await readAll(io.stdin)).replace(/\r?\n$/, '') : opts.text;
  // The server refuses these too (400); said here before any request, naming where the text came from.
  if (body.trim() === '') throw new UsageError(opts.text === '-' ? 'the comment read from stdin is empty' : 'the comment must not be empty');
  if (opts.author !== undefined && opts.author.trim() === '') throw new UsageError('--author must not be empty (leave it out for the node id)');
  const client = await ticketsClient(opts.factory, opts);
  // Bodies over the size limit and a ticket at its most comments are the server's to refuse (413).
  const comment = await callApi('tickets', () => client.comment(id, { body, ...(opts.author !== undefined ? { author: opts.author } : {}) }), { flags: { body: '<text>', author: '--author' } });
  if (opts.json) return printJson(io, comment);
  printFields(io, [
    ['id', comment.id],
    ['author', comment.author],
    ['created', comment.created_at],
    ['body', comment.body],
  ]);
}
