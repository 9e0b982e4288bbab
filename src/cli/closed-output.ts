// Whether this command goes on when its reader closes stdout or stderr (`mkt ... | head`):
// most commands stop quietly, but `mkt monitor run` owes its job a finished run and an end ping.
// The flag lives on globalThis: the entry is a bundle and the verbs load from dist/ beside it,
// so each has its own copy of this module.
const FLAG = Symbol.for('mkt.continueWhenOutputCloses');
type Flagged = { [FLAG]?: boolean };

/** Called by a command that must outlive a closed output (it stops writing there instead). */
export function continueWhenOutputCloses(): void {
  (globalThis as Flagged)[FLAG] = true;
}

export function continuesWhenOutputCloses(): boolean {
  return (globalThis as Flagged)[FLAG] === true;
}
