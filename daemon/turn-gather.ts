// When a queue of small writes (a monitor's heartbeat pings, a license's lease renewals) is written
// as one group: not at the first turn of the event loop after its first entry, but once a turn
// brings nothing more, within a bound. A group write has a fixed cost (a transaction and its
// commit, ~100-200 µs on SQLite) that a larger group shares; each turn's poll reads what the
// sockets hold, so under load a queue keeps growing for a few turns (bench/README.md, "A group of
// pings gathered over several turns").

/** At most this many turns after the first look, by default. */
export const GATHER_TURNS = 4;

export class TurnGather {
  private seen = 0;
  private turns = 0;
  private gathering = false;

  constructor(
    /** The queue's length now. */
    private readonly size: () => number,
    /** Writes the queue; called once per start(), at the turn that found no more. */
    private readonly flush: () => void,
    private readonly maxTurns = GATHER_TURNS,
  ) {}

  /**
   * Looks at the next turn, then at each later turn that found the queue longer, up to maxTurns
   * more: a lone entry is written at the first look. A call while gathering changes nothing.
   */
  start(): void {
    if (this.gathering) return;
    this.gathering = true;
    this.seen = this.size();
    this.turns = 0;
    setImmediate(this.look);
  }

  private readonly look = (): void => {
    const queued = this.size();
    if (queued > this.seen && this.turns < this.maxTurns) {
      this.seen = queued;
      this.turns++;
      setImmediate(this.look);
      return;
    }
    this.gathering = false;
    this.flush();
  };
}
