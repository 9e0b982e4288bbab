// The Stripe-Signature scheme of the payment webhook: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">,
// a 300 s tolerance, several v1 values (secret rotation), nothing of the secret in the reasons.
import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhook } from '../../../src/crypto/webhook-signature.js';

const SECRET = 'whsec_test_secret';
const BODY = '{"id":"evt_1","type":"checkout.session.completed"}';

describe('webhook signatures', () => {
  it('matches the published scheme and verifies within the tolerance', () => {
    const header = signWebhook(SECRET, BODY, 1_700_000_000);
    const v1 = createHmac('sha256', SECRET).update(`1700000000.${BODY}`).digest('hex');
    expect(header).toBe(`t=1700000000,v1=${v1}`);
    expect(verifyWebhook(SECRET, BODY, header, 1_700_000_300)).toBeUndefined();
    expect(verifyWebhook(SECRET, BODY, header, 1_700_000_301)).toBe('signature timestamp outside the tolerance');
    expect(verifyWebhook(SECRET, BODY, header, 1_699_999_699)).toBe('signature timestamp outside the tolerance');
  });

  it('accepts any matching v1 among several, and ignores other schemes', () => {
    const good = signWebhook(SECRET, BODY, 10).split(',')[1]!;
    expect(verifyWebhook(SECRET, BODY, `t=10,v0=abc,v1=${'0'.repeat(64)},${good}`, 10)).toBeUndefined();
  });

  it('refuses a missing, malformed, tampered or foreign signature without echoing the secret', () => {
    const header = signWebhook(SECRET, BODY, 10);
    const reasons = [
      verifyWebhook(SECRET, BODY, undefined, 10),
      verifyWebhook(SECRET, BODY, 'garbage', 10),
      verifyWebhook(SECRET, BODY, 't=abc,v1=00', 10),
      verifyWebhook(SECRET, BODY + ' ', header, 10),
      verifyWebhook('whsec_other', BODY, header, 10),
      verifyWebhook(SECRET, BODY, header.replace(/v1=../, 'v1=zz'), 10),
    ];
    expect(reasons).toEqual([
      'missing Stripe-Signature header',
      'malformed Stripe-Signature header',
      'malformed Stripe-Signature header',
      'signature does not match',
      'signature does not match',
      'signature does not match',
    ]);
    for (const r of reasons) expect(r).not.toContain(SECRET);
  });
});
