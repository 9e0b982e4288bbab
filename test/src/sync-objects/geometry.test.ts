// Spec marketplace-sync blob rule 5: part boundaries are a deterministic function of size_bytes,
// within S3's limits (5 MiB minimum part but the last, 10,000 parts, 5 GiB per part).
import { describe, expect, it } from 'vitest';
import { MAX_BLOB_BYTES, partGeometry, partLength, S3_MAX_PART_BYTES, S3_MAX_PARTS, S3_MIN_PART_BYTES } from '../../../src/sync-objects/geometry.js';

const MIB = 1024 * 1024;

describe('multipart part geometry', () => {
  it('uses 8 MiB parts and a shorter last part', () => {
    const g = partGeometry(20 * MIB + 5);
    expect(g).toEqual({ part_size: 8 * MIB, part_count: 3 });
    expect([1, 2, 3].map((n) => partLength(20 * MIB + 5, g, n))).toEqual([8 * MIB, 8 * MIB, 4 * MIB + 5]);
    expect(partGeometry(1)).toEqual({ part_size: 8 * MIB, part_count: 1 });
    expect(partGeometry(8 * MIB)).toEqual({ part_size: 8 * MIB, part_count: 1 });
  });

  it('grows the part size in whole MiB to stay within 10,000 parts, up to the 5 TiB maximum', () => {
    for (const size of [10_000 * 8 * MIB, 10_000 * 8 * MIB + 1, 200 * 1024 * MIB + 7, MAX_BLOB_BYTES]) {
      const g = partGeometry(size);
      expect(g.part_count).toBeLessThanOrEqual(S3_MAX_PARTS);
      expect(g.part_size % MIB).toBe(0);
      expect(g.part_size).toBeGreaterThanOrEqual(S3_MIN_PART_BYTES);
      expect(g.part_size).toBeLessThanOrEqual(S3_MAX_PART_BYTES);
      expect(partLength(size, g, g.part_count)).toBeGreaterThan(0);
      expect(g.part_size * (g.part_count - 1) + partLength(size, g, g.part_count)).toBe(size);
    }
    expect(partGeometry(10_000 * 8 * MIB + 1).part_size).toBe(9 * MIB);
  });

  it('refuses empty, fractional and oversized blobs, and part numbers outside the geometry', () => {
    expect(() => partGeometry(0)).toThrow(RangeError);
    expect(() => partGeometry(1.5)).toThrow(RangeError);
    expect(() => partGeometry(MAX_BLOB_BYTES + 1)).toThrow(/largest blob/);
    expect(() => partLength(10, partGeometry(10), 2)).toThrow(/outside 1..1/);
  });
});
