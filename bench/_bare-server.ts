// bench/_util.ts bareServer in a process of its own, answering BARE_BODY, for a profiler to sample
// alone (bench/_perf-row.ts with MKT_PERF_AGAINST=bare). Run as the guard runs bareServer, under
// tsx, so the profile is of the very reference the ratios are taken against.
//
//   BARE_BODY='{"a":1}' node --import tsx bench/_bare-server.ts
import { bareServer } from './_util.js';

const { url } = await bareServer(process.env.BARE_BODY ?? '{}');
console.log(`listening on ${url}`);
