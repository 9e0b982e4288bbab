// The request turn: the part of one event-loop iteration from the first HTTP request it takes up
// to its check phase (setImmediate). node:http hands a request to the server in the socket's read
// callback, in the poll phase, so every request of a turn arrived before the poll that delivered
// it returned. A read made in that span, in a snapshot taken after the first request was taken
// up, therefore sees every commit made before any of the turn's requests arrived: SQLite's reads
// share one read transaction for the turn on that ground (src/store/sql-sqlite.ts).
// Reads outside a request turn (timers, jobs, a request answered through inject()) are not in one.
// One gap: libuv polls again within the same phase when a poll returned 1,024 events, and a
// request of that second poll may have arrived after the turn's snapshot, by at most the time the
// first 1,024 took to handle.

let open = false;
const ends: (() => void)[] = [];

function endTurn(): void {
  open = false;
  // Each end is its owner's to make safe (none throws); all run, in the order they were asked.
  for (const end of ends.splice(0)) end();
}

/** Called by the HTTP server as it takes up a request: opens the turn, if not open, until the check phase. */
export function requestArrived(): void {
  if (open) return;
  open = true;
  setImmediate(endTurn);
}

/** Whether a request turn is open now. */
export function inRequestTurn(): boolean {
  return open;
}

/** Runs `end` when the open request turn ends; only while one is open (inRequestTurn). */
export function atRequestTurnEnd(end: () => void): void {
  if (!open) throw new Error('atRequestTurnEnd outside a request turn');
  ends.push(end);
}
