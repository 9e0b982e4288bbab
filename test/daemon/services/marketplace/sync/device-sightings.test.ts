// DeviceSightings: a device's pull writes its sighting when none was written for it in the last
// minute; the record is bounded, and a device it forgot is due at once.
import { describe, expect, it } from 'vitest';
import { DeviceSightings, SIGHTING_INTERVAL_MS } from '../../../../../daemon/services/marketplace/sync/device-sightings.js';

const ana = { appId: 'app', userId: 'ana' };

describe('DeviceSightings', () => {
  it('is due a minute after a write, and again for the oldest device once it holds more than its bound', () => {
    const s = new DeviceSightings(2);
    expect(s.due(ana, 'laptop', 0)).toBe(true);
    s.wrote(ana, 'laptop', 0);
    expect(s.due(ana, 'laptop', SIGHTING_INTERVAL_MS - 1)).toBe(false);
    expect(s.due(ana, 'laptop', SIGHTING_INTERVAL_MS)).toBe(true);
    s.wrote(ana, 'phone', 10);
    // Written again, laptop becomes the newest: the third device pushes phone out, not laptop.
    s.wrote(ana, 'laptop', 20);
    s.wrote(ana, 'tablet', 30);
    expect(s.due(ana, 'phone', 40)).toBe(true);
    expect(s.due(ana, 'laptop', 40)).toBe(false);
    expect(s.due(ana, 'tablet', 40)).toBe(false);
    expect(s.due({ appId: 'app', userId: 'bo' }, 'tablet', 40)).toBe(true);
  });
});
