// Entry sealing (issue 7 "Changelog"): AEAD whose associated data binds table, op, row id and
// key id, so a ciphertext moved to another row, table or key id fails to open.
import { describe, expect, it } from 'vitest';
import { newMasterKey } from '../../../src/crypto/envelope.js';
import { openEntryData, sealEntryData, SealError } from '../../../src/crypto/sync-entry.js';

const k = newMasterKey();
const at = { table: 'notes', op: 'upsert', row_id: 'n1', key_id: 1 };

describe('sync entry sealing', () => {
  it('round-trips any JSON value and never shows the plaintext', () => {
    for (const v of [{ title: 'secret plan', n: 3 }, 'text', 42, null, [1, { a: true }]]) {
      const s = sealEntryData(k, at, v);
      expect(s.startsWith('m1.')).toBe(true);
      expect(s).not.toContain('secret');
      expect(openEntryData(k, at, s)).toEqual(v);
    }
  });

  it('a ciphertext moved to another row, table, op or key id fails to open', () => {
    const s = sealEntryData(k, at, { x: 1 });
    for (const moved of [{ ...at, row_id: 'n2' }, { ...at, table: 'todos' }, { ...at, op: 'delete' }, { ...at, key_id: 2 }]) {
      expect(() => openEntryData(k, moved, s)).toThrow(SealError);
    }
  });

  it('tampered ciphertext and a wrong key fail loudly', () => {
    const s = sealEntryData(k, at, { x: 1 });
    const raw = Buffer.from(s.slice(3), 'base64');
    raw[14] ^= 0x40;
    expect(() => openEntryData(k, at, 'm1.' + raw.toString('base64'))).toThrow(/failed to open/);
    expect(() => openEntryData(newMasterKey(), at, s)).toThrow(/failed to open/);
    expect(() => openEntryData(k, at, { plain: true })).toThrow(/not sealed/);
    expect(() => openEntryData(k, at, 'm1.AAAA')).toThrow(/truncated/);
  });
});
