// Grant token format: `fpg_` + 32 base62 random chars + 6 base62 checksum chars.
// The fixed prefix and checksum let secret scanners spot leaked tokens and let us
// reject typos without a store lookup. Only the SHA-256 of a token is stored.
import { createHash, randomBytes } from 'node:crypto';

export const GRANT_TOKEN_PREFIX = 'fpg_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LEN = 32;
const CHECK_LEN = 6;

function base62(bytes: Uint8Array, len: number): string {
  let out = '';
  for (let i = 0; out.length < len; i++) out += BASE62[(bytes[i % bytes.length] ?? 0) % 62];
  return out;
}

function checksum(body: string): string {
  return base62(createHash('sha256').update(`${GRANT_TOKEN_PREFIX}${body}`).digest(), CHECK_LEN);
}

export function mintGrantToken(): string {
  // Rejection-free: 62 does not divide 256, the slight bias is irrelevant at 32 chars of entropy (~190 bits).
  const body = base62(randomBytes(BODY_LEN), BODY_LEN);
  return `${GRANT_TOKEN_PREFIX}${body}${checksum(body)}`;
}

export const GRANT_TOKEN_RE = new RegExp(`^${GRANT_TOKEN_PREFIX}[0-9A-Za-z]{${BODY_LEN + CHECK_LEN}}$`);

/** Shape and checksum only; existence is checked against the store. */
export function isWellFormedGrantToken(token: string): boolean {
  if (!GRANT_TOKEN_RE.test(token)) return false;
  const body = token.slice(GRANT_TOKEN_PREFIX.length, GRANT_TOKEN_PREFIX.length + BODY_LEN);
  return token.slice(-CHECK_LEN) === checksum(body);
}

export function hashGrantToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What may be shown about a token after creation. */
export function grantTokenHint(token: string): string {
  return `${GRANT_TOKEN_PREFIX}…${token.slice(-4)}`;
}
