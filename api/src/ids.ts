// Prefixed, time-sortable, unguessable identifiers: <prefix>_<10 chars time><16 chars random>.
// Crockford base32 (lowercase) so ids sort by creation time as plain strings.
import { randomFillSync } from 'node:crypto';

export const ID_PREFIXES = {
  shop: 'shop',
  endpoint: 'ep',
  event: 'evt',
  receipt: 'rcpt',
  attempt: 'att',
  grant: 'grt',
  intent: 'int',
  diagnostics: 'diag',
  audit: 'aud',
  request: 'req',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

let lastMs = 0;
let lastRandom: number[] = [];

let lastTimeMs = -1;
let lastTime = '';

function encodeTime(ms: number): string {
  if (ms === lastTimeMs) return lastTime;
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  lastTimeMs = ms;
  lastTime = out;
  return out;
}

// Random bytes drawn from a pool refilled by the CSPRNG (one call per 256 ids, not per id).
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomDigits(): number[] {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const digits = new Array<number>(16);
  // 256 is a multiple of 32, so b % 32 is uniform.
  for (let i = 0; i < 16; i++) digits[i] = (pool[poolAt + i] as number) % 32;
  poolAt += 16;
  return digits;
}

/** Monotonic within one process: ids minted in the same millisecond still sort in mint order. */
export function newId(kind: IdKind, now: number = Date.now()): string {
  let digits: number[];
  if (now <= lastMs) {
    now = lastMs;
    digits = lastRandom.slice();
    // increment the random part as a base-32 number
    let i = digits.length - 1;
    while (i >= 0) {
      const d = digits[i] ?? 0;
      if (d < 31) {
        digits[i] = d + 1;
        break;
      }
      digits[i] = 0;
      i--;
    }
  } else {
    digits = randomDigits();
  }
  lastMs = now;
  lastRandom = digits;
  let random = '';
  for (const d of digits) random += ALPHABET[d];
  return `${ID_PREFIXES[kind]}_${encodeTime(now)}${random}`;
}

const ID_BODY = /^[0-9a-hjkmnp-tv-z]{26}$/;

/** True when `value` is syntactically an id of `kind` (says nothing about existence). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length));
}
