// The marketplace's git-notes area: hosted repositories (the shared stores' records + bare repos
// under `<data-dir>/repos/`), the notes index, the notes API and git smart HTTP. At start every
// hosted repository's index is caught up in the background, so notes changed while the
// server was down are found again; every repository gets the current pre-receive hook first.
import type { OpenArea } from '../area.js';
import { CATCH_UP_JOB, NotesIndexer, type HostedRepo } from '../../../../src/notes/indexer.js';
import { commitSummariesThrough } from '../../../../src/notes/note-meta.js';
import { formatOfId } from '../../../../src/git/objects.js';
import { NoteWriter } from '../../../../src/notes/writer.js';
import { repoDir, restrictReposRoot } from '../../../../src/git/hosting.js';
import { RepoGitPool } from '../../../../src/git/repo-git.js';
import { installHooks } from '../../../../src/git/hooks.js';
import { Access } from './access.js';
import { Callers } from './callers.js';
import { NotesApi } from './notes.js';
import { NotesSearch } from './search.js';
import { SqlOwnerRepos } from '../../../../src/store/repos-by-owner.js';
import { notesRoutes } from './routes.js';
import { installNoteGetLane } from './get-lane.js';
import { gitHttpRoutes } from './git-http.js';
import { accountRoutes } from '../accounts/routes.js';

export const openNotesArea: OpenArea = async (shared) => {
  const { ctx, dataDir } = shared;
  const { accounts, repos, notes: index } = shared.stores;
  // What the index's migration could not set up (pg_trgm refused on a managed server), said once.
  for (const w of index.warnings) ctx.logger.warn(w);
  // Notes refs it cannot read are skipped and logged once as warnings.
  // Each repository's long-lived git processes, shared by note writes, the API's object checks
  // and the index's reading of the commits a write annotates (no process started per write).
  const git = new RepoGitPool();
  const summaries = async (repo: HostedRepo, commits: readonly string[]) => (commits.length === 0 ? new Map() : commitSummariesThrough(git.get(repo.dir, formatOfId(commits[0]!)), commits));
  const indexer = new NotesIndexer(index, ctx.logger, { summaries });
  // A write that finds its ref moved merges into it when the namespace has a strategy.
  const mergeStrategy = async (repoId: string, namespace: string) => (await repos.notesMergeStrategies(repoId)).get(namespace) ?? 'manual';
  const writer = new NoteWriter(indexer, () => Math.floor(ctx.clock.now() / 1000), { git, mergeStrategy });
  const access = new Access(repos);
  const callers = new Callers(accounts);
  const api = new NotesApi({ dataDir, repos, index, indexer, writer, access, git });
  const search = new NotesSearch({ dataDir, index, indexer, access, ownerRepos: new SqlOwnerRepos(shared.stores.sql) });
  // Repositories created before they were made 0700/0600 whatever the umask are hidden below a
  // 0700 `repos/` (src/git/hosting.ts).
  try {
    restrictReposRoot(dataDir);
  } catch (err) {
    ctx.logger.error({ err }, 'making the repositories directory 0700 failed');
  }
  // Repositories created before the hook existed (or with an older one) get the current hook
  // before the first push is served.
  for (const repo of await repos.listRepos()) {
    try {
      installHooks(repoDir(dataDir, repo.owner, repo.name));
    } catch (err) {
      ctx.logger.error({ err, repo: `${repo.owner}/${repo.name}` }, 'installing the pre-receive hook failed');
    }
  }
  let closed = false;
  let catchUp: Promise<void> = Promise.resolve();
  return {
    async register(app) {
      await app.register(async (scope) => {
        await notesRoutes(scope, { api, search, callers });
        // The reads scripts make most, taken before fastify (get-lane.ts); in the routes' scope,
        // whose serializer compiler their answers are written by.
        installNoteGetLane(scope, api);
      });
      await app.register(async (scope) => gitHttpRoutes(scope, { dataDir, repos, access, callers, indexer }));
      // Served here because the notes area holds the callers (tokens and sessions) it answers about.
      await app.register(async (scope) => accountRoutes(scope, { callers }));
    },
    start() {
      // One instance at a time walks every repository (instances of a cluster start together);
      // an instance that skips it still catches a repository up on its first read.
      catchUp = shared.stores.sql
        .exclusive(CATCH_UP_JOB, async () => {
          for (const repo of await repos.listRepos()) {
            if (closed) return;
            await indexer
              .ensureCurrent({ id: repo.id, dir: repoDir(dataDir, repo.owner, repo.name) })
              .catch((err: unknown) => ctx.logger.error({ err, repo: `${repo.owner}/${repo.name}` }, 'notes index catch-up failed'));
          }
        })
        .then((ran) => void (ran || ctx.logger.debug({ job: CATCH_UP_JOB }, 'another instance is catching the notes index up')))
        .catch((err: unknown) => ctx.logger.error({ err }, 'listing repositories for the notes index catch-up failed'));
    },
    async close() {
      closed = true;
      await catchUp;
      await indexer.close();
      await git.close();
    },
  };
};
