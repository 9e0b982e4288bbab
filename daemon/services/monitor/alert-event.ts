// What an alert says: the transition of one target's incident, as every channel renders it. Its own
// module, so that the channels (which render it) and the sender (which routes it) share it without
// importing each other.
import type { Incident } from '../../../src/store/monitor.js';

export interface AlertEvent {
  event: 'incident.opened' | 'incident.resolved';
  instance: string;
  target: string;
  label: string;
  incident: Incident;
  /** A reminder of an incident still open (`remind_every`): its ordinal, from 1. */
  reminder?: number;
  /** Children (`depends_on`) down because of this target: their incidents sent no alert of their own. */
  affected?: string[];
}
