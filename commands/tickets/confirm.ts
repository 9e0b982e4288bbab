// Asking a yes/no question on a terminal before an action that cannot be undone (`mkt tickets
// delete`): the question on stderr, one line of answer read from stdin.
import type { IOStreams } from '../../src/cli/io.js';

/** Only `y` or `yes` (any case, blanks around) says yes; an empty line, anything else or end of input says no. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}

/**
 * Whether confirmation can be asked: stdin is a terminal, so someone is there to answer.
 * (A terminal on stderr alone is not enough: `yes | mkt tickets delete ID` must not answer itself.)
 */
export function canAsk(io: IOStreams): boolean {
  return Boolean(io.stdin.isTTY);
}

/**
 * Writes `question` to stderr and reads one line from stdin. Stops reading at the first line
 * break (stdin is paused again, so the process can exit); end of input is a no.
 */
export async function confirm(io: IOStreams, question: string): Promise<boolean> {
  io.stderr.write(`${question} [y/N] `);
  const stdin = io.stdin;
  const line = await new Promise<string>((resolve, reject) => {
    let text = '';
    const finish = (answer: string): void => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onError);
      stdin.pause();
      resolve(answer);
    };
    const onData = (chunk: Buffer | string): void => {
      text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      const nl = text.indexOf('\n');
      if (nl >= 0) finish(text.slice(0, nl));
    };
    // Ctrl-D on an empty line: no answer, and the terminal's cursor is still after the question.
    const onEnd = (): void => {
      io.stderr.write('\n');
      finish(text);
    };
    const onError = (err: Error): void => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      reject(err);
    };
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.on('error', onError);
    stdin.resume();
  });
  return isYes(line);
}
