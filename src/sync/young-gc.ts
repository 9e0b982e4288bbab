// Collects V8's young generation on demand, so a blob transfer's garbage stays small.
// node:crypto returns every cipher output in a fresh buffer, so sealing or opening a blob makes
// as much garbage as it moves bytes. V8 scavenges young array buffers only once 32 MiB of them
// have piled up (twice its largest semi-space, a constant no flag changes): a third of the
// client's 100 MiB budget. A scavenge after each part costs well under a millisecond.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options: { type: 'minor' | 'major' }) => void;

let gc: Gc | null | undefined;

/** The `gc` function of `--expose-gc`, made once without the flag on the command line. */
function exposeGc(): Gc | null {
  const global = (globalThis as { gc?: unknown }).gc;
  if (typeof global === 'function') return global as Gc;
  // As jest's leak detector does: a context created while the flag is on gets `gc`; the flag is
  // turned off again at once, so no other context (nor user code) ever sees it.
  try {
    setFlagsFromString('--expose-gc');
    const fn: unknown = runInNewContext('gc');
    return typeof fn === 'function' ? (fn as Gc) : null;
  } catch {
    return null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** Frees the young garbage now (a scavenge); a no-op where V8 refuses to expose `gc`. */
export function collectYoungGarbage(): void {
  if (gc === undefined) gc = exposeGc();
  gc?.({ type: 'minor' });
}
