// What the backup verbs share: sizes in words, and turning a failure that is not already a CLI
// error (a full disk, a permission) into exit 3 with one line.
import { CliError, UnreachableError } from '../../src/cli/errors.js';

export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export function ioFailure(err: unknown, what: string): CliError {
  if (err instanceof CliError) return err;
  return new UnreachableError(`${what}: ${(err as Error).message}`);
}
