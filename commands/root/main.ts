// Process entry of the CLI: the only place that exits.
import { run } from './run.js';
import { continuesWhenOutputCloses } from '../../src/cli/closed-output.js';

// `mkt ... | head` closes the pipe early: that is the reader saying "enough", not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' && continuesWhenOutputCloses()) return;
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

void run(process.argv.slice(2)).then((code) => {
  // Flush stdout before exiting: pooled keep-alive sockets must not hold the process open.
  process.stdout.write('', () => process.exit(code));
});
