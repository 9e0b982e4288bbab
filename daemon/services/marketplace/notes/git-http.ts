// Git's smart HTTP protocol at /{owner}/{repo}.git through `git http-backend` (CGI), with the
// marketplace's accounts: HTTP Basic with a token as password; anonymous callers of a private or
// missing repository get the same 401 challenge (so clients send credentials, and no answer tells
// the two apart), authenticated callers who cannot see it get 404, and pushes need a push-scope
// token of an account allowed to push.
// A push of a notes ref whose namespace has a merge strategy is merged into the ref by the
// proc-receive hook (src/git/hooks.ts), as the pusher: the strategies are read for each push.
// After a push the notes index catches up with whatever notes refs moved.
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { repoDir, reposRoot } from '../../../../src/git/hosting.js';
import { gitEnv } from '../../../../src/git/run.js';
import { hookConfigEnv } from '../../../../src/git/hooks.js';
import type { NotesIndexer } from '../../../../src/notes/indexer.js';
import type { Repo, RepoStore } from '../../../../src/store/repos.js';
import { HttpError } from '../../../plugins/errors.js';
import type { Access, Caller } from './access.js';
import type { Callers } from './callers.js';
import { refusalToHttp } from './refusals.js';

const CHALLENGE = { 'www-authenticate': 'Basic realm="mkt", charset="UTF-8"' };
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);

interface Deps {
  dataDir: string;
  repos: RepoStore;
  access: Access;
  callers: Callers;
  indexer: NotesIndexer;
}

type GitParams = { owner: string; repo: string };

export async function gitHttpRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  // Pack bodies are streamed to git untouched (no size limit of the JSON parser applies).
  app.addContentTypeParser(/^application\/x-git-/, (_req, payload, done) => done(null, payload));

  async function authorize(req: FastifyRequest<{ Params: GitParams }>, service: string): Promise<{ repo: Repo; caller: Caller }> {
    const name = req.params.repo.replace(/\.git$/i, '');
    if (!req.params.repo.toLowerCase().endsWith('.git') || !SERVICES.has(service)) throw new HttpError(404, 'not found');
    let caller: Caller;
    try {
      caller = await deps.callers.caller(req);
    } catch (err) {
      if (err instanceof HttpError && err.statusCode === 401) throw new HttpError(401, err.message, CHALLENGE);
      throw err;
    }
    const repo = await deps.repos.findRepo(req.params.owner, name);
    const push = service === 'git-receive-pack';
    // A missing repository challenges like a private one: a 404 here would tell anonymous callers
    // which private repositories exist.
    if (!caller.user && (push || !repo || repo.private)) throw new HttpError(401, 'authentication required', CHALLENGE);
    if (!repo || !(await deps.access.canRead(repo, caller))) throw new HttpError(404, `repository ${req.params.owner}/${name} not found`);
    if (push) {
      const right = await deps.access.pushRight(repo, caller);
      if (right.kind !== 'ok') throw refusalToHttp(right);
    }
    return { repo, caller };
  }

  /** Runs git http-backend; `beforeEnd` runs after git finished and before the client is answered. */
  async function backend(req: FastifyRequest<{ Params: GitParams }>, reply: FastifyReply, repo: Repo, caller: Caller, pathTail: string, body?: Readable, beforeEnd?: () => Promise<void>): Promise<void> {
    const dir = repoDir(deps.dataDir, repo.owner, repo.name);
    // Only a push can merge; a fetch reads no strategies.
    const merges = pathTail === 'git-receive-pack' ? await deps.repos.notesMergeStrategies(repo.id) : new Map<string, string>();
    // A merge commit made for this push is the pusher's (http-backend would name REMOTE_USER@address).
    const identity: Record<string, string> = caller.user
      ? { GIT_AUTHOR_NAME: caller.user.name, GIT_AUTHOR_EMAIL: caller.user.email, GIT_COMMITTER_NAME: caller.user.name, GIT_COMMITTER_EMAIL: caller.user.email }
      : {};
    const rel = dir.slice(reposRoot(deps.dataDir).length);
    const url = new URL(req.url, 'http://x');
    const env = gitEnv({
      GIT_PROJECT_ROOT: reposRoot(deps.dataDir),
      GIT_HTTP_EXPORT_ALL: '1',
      // The pre-receive hook holds pushed notes to the note size limit (src/git/hooks.ts).
      // and hands pushes of notes refs with a merge strategy to the proc-receive hook.
      ...hookConfigEnv(dir, merges),
      ...(merges.size > 0 ? identity : {}),
      PATH_INFO: `${rel}/${pathTail}`,
      REQUEST_METHOD: req.method,
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: String(req.headers['content-type'] ?? ''),
      REMOTE_ADDR: req.ip,
      ...(caller.user ? { REMOTE_USER: caller.user.name } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
    }) as Record<string, string>;
    reply.hijack();
    const res = reply.raw;
    return new Promise((resolve) => {
      const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8').slice(0, 4000)));
      child.stdin.on('error', () => undefined);
      if (body) body.pipe(child.stdin);
      else child.stdin.end();
      let head = Buffer.alloc(0);
      let headersDone = false;
      child.stdout.on('data', (chunk: Buffer) => {
        if (headersDone) {
          res.write(chunk);
          return;
        }
        head = Buffer.concat([head, chunk]);
        const crlf = head.indexOf('\r\n\r\n');
        const lf = head.indexOf('\n\n');
        const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
        if (end < 0) return;
        const sepLen = end === crlf ? 4 : 2;
        let status = 200;
        const headers: Record<string, string> = {};
        for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
          const colon = line.indexOf(':');
          if (colon < 0) continue;
          const k = line.slice(0, colon).trim();
          const v = line.slice(colon + 1).trim();
          if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10) || 500;
          else headers[k] = v;
        }
        headersDone = true;
        res.writeHead(status, headers);
        res.write(head.subarray(end + sepLen));
      });
      child.on('close', (code) => {
        void (async () => {
          if (!headersDone) {
            req.log.error({ code, stderr: stderr.trim() }, 'git http-backend failed');
            res.writeHead(500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: 'git http-backend failed' }));
          } else {
            // A client that pushed and then reads through the API must see its push.
            if (beforeEnd) await beforeEnd().catch((err: unknown) => req.log.error({ err }, 'after-push work failed'));
            res.end();
          }
          resolve();
        })();
      });
      child.on('error', (err) => {
        req.log.error({ err }, 'git http-backend did not start');
      });
    });
  }

  app.get<{ Params: GitParams; Querystring: { service?: string } }>('/:owner/:repo/info/refs', { schema: { hide: true } }, async (req, reply) => {
    const service = req.query.service ?? '';
    // Only the smart protocol is served; dumb-HTTP clients get a clear 403.
    if (!service) throw new HttpError(403, 'only git smart HTTP is served; use git 1.6.6 or later');
    const { repo, caller } = await authorize(req, service);
    await backend(req, reply, repo, caller, 'info/refs');
  });

  for (const service of SERVICES) {
    app.post<{ Params: GitParams }>(`/:owner/:repo/${service}`, { schema: { hide: true } }, async (req, reply) => {
      // Only git's own request type reaches git as a stream; any other body was parsed into a
      // value that cannot be piped (the request would hang), so it is refused before anything runs.
      const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== `application/x-${service}-request`) throw new HttpError(415, `${service} takes a body of type application/x-${service}-request`);
      const { repo, caller } = await authorize(req, service);
      const hosted = { id: repo.id, dir: repoDir(deps.dataDir, repo.owner, repo.name) };
      // After a push the notes index catches up before the client hears back.
      const afterPush = service === 'git-receive-pack' ? () => deps.indexer.ensureCurrent(hosted) : undefined;
      await backend(req, reply, repo, caller, service, req.body as Readable, afterPush);
    });
  }
}
