// The two assertions every service's fuzz run makes on its report: every operation of its
// /openapi.json was reached, and no answer broke the contract (no 5xx, `{"error"}` on 4xx).
import { expect, it } from 'vitest';
import type { FuzzReport, FuzzSettings } from './run.js';

/** Declares the shared tests; `report` is read when they run (it is filled in by beforeAll). */
export function itKeepsTheContract(settings: FuzzSettings, report: () => FuzzReport): void {
  it(`sends the requests (${settings.only ?? settings.runs}) and every operation of /openapi.json is hit`, () => {
    const r = report();
    expect(r.sent).toBe(settings.only !== undefined ? 1 : settings.runs);
    if (settings.only === undefined) for (const [op, c] of r.perOp) expect(c.sent, op).toBeGreaterThan(0);
  });

  it('answers no 5xx, and a JSON {"error"} body on every 4xx', () => {
    expect([...report().distinct.values()], `seed ${settings.seed}`).toEqual([]);
  });
}
