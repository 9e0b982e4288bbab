// Flag helpers every noun's registration shares (gh's cmdutil): a leaf that imports only
// commander, so commands/*/index.ts can use them without reaching back into the program root.
import { Option } from 'commander';

/** The `--server` and `--json` options every client command carries. */
export function serverOption(service: string): Option {
  return new Option('--server <url>', `${service} server URL (else MKT_${service.toUpperCase()}_URL, the saved profile, or localhost)`);
}
export function jsonOption(): Option {
  return new Option('--json', 'print machine-readable JSON');
}
