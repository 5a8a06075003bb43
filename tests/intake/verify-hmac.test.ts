// HmacKey computes HMAC-SHA256 from its precomputed pads (verify.ts); it must equal Node's own
// createHmac for every key length around SHA-256's 64-byte block (shorter keys are padded, longer
// ones hashed first) and for parts given as UTF-8 strings or bytes.
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacKey, verifySecret } from '../../api/src/intake/verify.ts';

describe('HmacKey', () => {
  it('equals createHmac for keys from 0 to 200 bytes and mixed parts', () => {
    for (const keyLength of [0, 1, 31, 32, 63, 64, 65, 100, 128, 200]) {
      const key = randomBytes(keyLength);
      const hk = new HmacKey(key);
      for (const bodyLength of [0, 1, 55, 56, 64, 1024, 70_000]) {
        const body = randomBytes(bodyLength);
        const prefix = `${1_700_000_000 + bodyLength}.é€😀.`;
        const expected = createHmac('sha256', key).update(prefix).update(body).digest();
        expect(hk.digest([prefix, body]).equals(expected), `key ${keyLength} B, body ${bodyLength} B`).toBe(true);
        expect(hk.digest([body]).equals(createHmac('sha256', key).update(body).digest())).toBe(true);
      }
    }
  });

  it('gives each call its own result (the reused outer buffer is not shared with callers)', () => {
    const hk = new HmacKey(Buffer.from('secret'));
    const a = hk.digest(['a']);
    const b = hk.digest(['b']);
    expect(a.equals(createHmac('sha256', 'secret').update('a').digest())).toBe(true);
    expect(b.equals(createHmac('sha256', 'secret').update('b').digest())).toBe(true);
  });

  it("uses the mode's key bytes: Standard Webhooks signs with the base64-decoded secret", () => {
    const raw = randomBytes(24);
    const sw = verifySecret('standard_webhooks', `whsec_${raw.toString('base64')}`);
    expect(sw.hmacKey.digest(['m']).equals(createHmac('sha256', raw).update('m').digest())).toBe(true);
    const gh = verifySecret('github', 'plain-secret');
    expect(gh.hmacKey.digest(['m']).equals(createHmac('sha256', 'plain-secret').update('m').digest())).toBe(true);
  });
});
