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
  merchantSession: 'msess',
  alert: 'alrt',
  incident: 'inc',
  oauthFamily: 'ofam',
  oauthConsent: 'ocon',
  notification: 'ntf',
  lifecycleSignal: 'fls',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

let lastMs = 0;

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

const RANDOM_CHARS = 16;
/** The last id's random part as base-32 digits, and the same as ASCII characters. */
const lastRandom = new Uint8Array(RANDOM_CHARS);
const randomText = Buffer.alloc(RANDOM_CHARS);
const ALPHABET_CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));

function drawRandom(): void {
  if (poolAt + RANDOM_CHARS > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  // 256 is a multiple of 32, so b % 32 is uniform.
  for (let i = 0; i < RANDOM_CHARS; i++) lastRandom[i] = (pool[poolAt + i] as number) % 32;
  poolAt += RANDOM_CHARS;
}

/** Increments the random part as a base-32 number. */
function incrementRandom(): void {
  for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
    const d = lastRandom[i] as number;
    if (d < 31) {
      lastRandom[i] = d + 1;
      return;
    }
    lastRandom[i] = 0;
  }
}

/** Monotonic within one process: ids minted in the same millisecond still sort in mint order. */
export function newId(kind: IdKind, now: number = Date.now()): string {
  if (now <= lastMs) {
    now = lastMs;
    incrementRandom();
  } else {
    drawRandom();
  }
  lastMs = now;
  for (let i = 0; i < RANDOM_CHARS; i++) randomText[i] = ALPHABET_CODES[lastRandom[i] as number] as number;
  return `${ID_PREFIXES[kind]}_${encodeTime(now)}${randomText.toString('latin1')}`;
}

/** The smallest id of `kind` minted at `ms` or later: a bound for a time range read by id (ids sort by time). */
export function idFloor(kind: IdKind, ms: number): string {
  return `${ID_PREFIXES[kind]}_${encodeTime(ms)}${'0'.repeat(RANDOM_CHARS)}`;
}

/** The base-32 value of each character code, -1 for a character that is no digit (read per intake event). */
const DIGIT_OF = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT_OF[ALPHABET.charCodeAt(i)] = i;

/**
 * The moment an id was minted at (its 10 time characters), NaN when they are not base-32 digits.
 * `idFloor(kind, idTime(id)) <= id < idFloor(kind, idTime(id) + 1)`: a time range read by id holds
 * exactly the ids whose time is in the range.
 */
export function idTime(id: string): number {
  const at = id.indexOf('_') + 1;
  if (at === 0 || id.length < at + 10) return Number.NaN;
  let ms = 0;
  for (let i = at; i < at + 10; i++) {
    const code = id.charCodeAt(i);
    const d = code < 128 ? (DIGIT_OF[code] as number) : -1;
    if (d < 0) return Number.NaN;
    ms = ms * 32 + d;
  }
  return ms;
}

const ID_BODY = /^[0-9a-hjkmnp-tv-z]{26}$/;

/** True when `value` is syntactically an id of `kind` (says nothing about existence). */
export function isId(kind: IdKind, value: string): boolean {
  const prefix = `${ID_PREFIXES[kind]}_`;
  return value.startsWith(prefix) && ID_BODY.test(value.slice(prefix.length));
}
