// Child process for the memory test: runs one `mkt ...` command line in this process, then
// reports its exit code and peak resident set size (KiB) as one JSON line on fd 3.
import { writeSync } from 'node:fs';
import { run } from '../../../commands/root/run.js';

const code = await run(process.argv.slice(2));
writeSync(3, JSON.stringify({ code, max_rss_kib: process.resourceUsage().maxRSS }) + '\n');
process.exit(code);
