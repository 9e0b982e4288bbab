// Multipart part geometry, a pure function of the ciphertext length (`size_bytes`), so client
// and server always agree on part boundaries. S3's limits hold: parts of at least 5 MiB (the
// last excepted), at most 10,000 parts, at most 5 GiB per part and 5 TiB per object.

const MIB = 1024 * 1024;
/** S3: every part but the last is at least this large. */
export const S3_MIN_PART_BYTES = 5 * MIB;
/** S3: most parts one upload may have. */
export const S3_MAX_PARTS = 10_000;
/** S3: largest single part (and single PUT). */
export const S3_MAX_PART_BYTES = 5 * 1024 * MIB;
/** Part size used until a blob would need more than 10,000 parts of it. */
export const DEFAULT_PART_BYTES = 8 * MIB;
/** Largest blob (S3's object limit). */
export const MAX_BLOB_BYTES = 5 * 1024 * 1024 * MIB;
/** Largest one-shot upload (S3's single PUT limit); larger blobs go multipart. */
export const MAX_ONE_SHOT_BYTES = S3_MAX_PART_BYTES;

export interface PartGeometry {
  part_size: number;
  part_count: number;
}

/**
 * part_size = 8 MiB, or, when that would take more than 10,000 parts, the smallest whole number
 * of MiB that fits in 10,000; part_count = ceil(size / part_size). Parts are numbered from 1.
 */
export function partGeometry(sizeBytes: number): PartGeometry {
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 1) throw new RangeError('size_bytes must be a positive integer');
  if (sizeBytes > MAX_BLOB_BYTES) throw new RangeError(`size_bytes exceeds the largest blob (${MAX_BLOB_BYTES} bytes)`);
  let partSize = DEFAULT_PART_BYTES;
  if (Math.ceil(sizeBytes / partSize) > S3_MAX_PARTS) partSize = Math.ceil(sizeBytes / S3_MAX_PARTS / MIB) * MIB;
  return { part_size: partSize, part_count: Math.ceil(sizeBytes / partSize) };
}

/** Exact length of part `n` (1-based) of a blob of `sizeBytes`. */
export function partLength(sizeBytes: number, g: PartGeometry, n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > g.part_count) throw new RangeError(`part ${n} is outside 1..${g.part_count}`);
  return n < g.part_count ? g.part_size : sizeBytes - g.part_size * (g.part_count - 1);
}
