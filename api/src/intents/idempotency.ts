// Idempotency-Key handling for confirmations (Stripe semantics): the first
// request with a key claims it (insert-first, state `in_progress`); the stored
// response is replayed byte for byte for the same key and request; a different
// request with the same key → 422; a concurrent request → 409. Keys live 24 h.
// A refusal is stored too when it settles the intent (it can never be confirmed
// afterwards), so retries get the same refusal; otherwise the claim is released
// and the caller may fix the cause and retry with the same key.
// A key belongs to one grant and one operation in one shop (KeyScope): another grant that
// sends the same key gets its own claim, never this grant's stored response.
// Stored responses are sealed with the SecretBox (the data key) because a confirmation
// response can carry a secret shown once (new signing secret, share link).
import type { ErrorCode } from '../errors/catalog.ts';
import { AppError, type AppErrorOptions } from '../errors/problem.ts';
import { sha256Hex } from '../lib/crypto.ts';
import type { Services } from '../core/types.ts';
import {
  deleteIdempotencyKeyInProgress,
  findIdempotencyKey,
  insertIdempotencyKey,
  type KeyScope,
  markIdempotencyKeyDone,
  pruneIdempotencyKeys,
} from '../store/tables/intents.ts';

/** The longest Idempotency-Key accepted (printable ASCII, no spaces); the contract states it. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_KEY_PATTERN = `^[\\x21-\\x7e]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`;
const KEY_RE = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export function validateIdempotencyKey(key: string | undefined | null): string {
  if (key === undefined || key === null || key.trim() === '') {
    throw new AppError('idempotency_key_missing', {
      detail:
        'Send an `Idempotency-Key` header (1–255 printable ASCII characters, e.g. a UUID) with every confirmation.',
    });
  }
  const k = key.trim();
  if (!KEY_RE.test(k)) {
    throw new AppError('invalid_request', {
      detail: 'The Idempotency-Key must be 1–255 printable ASCII characters without spaces.',
      errors: [{ path: 'Idempotency-Key', message: 'must be 1–255 printable ASCII characters' }],
    });
  }
  return k;
}

export function requestHash(parts: readonly string[]): string {
  return sha256Hex(JSON.stringify(parts));
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; body: string; status: number };

/**
 * Claims `key` for `hash`, or returns the stored response. Throws 422 for a
 * different request and 409 while the first request is still running.
 */
export async function claimKey(services: Services, scope: KeyScope, key: string, hash: string): Promise<Claim> {
  const { db } = services;
  const now = services.now();
  const ttl = services.config.intents.idempotencyKeyTtlMs;
  return db.tx(async (tx) => {
    // Keys older than the TTL are forgotten (pruned here, for this shop, on use).
    await pruneIdempotencyKeys(tx, scope.shopId, now - ttl);
    if (await insertIdempotencyKey(tx, scope, key, hash, now)) return { kind: 'claimed' } as const;
    const row = await findIdempotencyKey(tx, scope, key);
    if (!row)
      throw new AppError('idempotency_key_in_use', {
        detail: 'The Idempotency-Key is being processed; retry shortly.',
      });
    if (row.request_hash !== hash) {
      throw new AppError('idempotency_key_reused', {
        detail:
          'This Idempotency-Key was already used within 24 hours for a different request. Use a new key for each distinct confirmation.',
      });
    }
    if (row.state !== 'done' || row.response_body === null) {
      throw new AppError('idempotency_key_in_use', {
        detail:
          'A request with this Idempotency-Key is still running. Retry with the same key shortly to receive its response.',
        retryAfterS: 1,
      });
    }
    return {
      kind: 'replay',
      body: services.secrets.decrypt(row.response_body),
      status: row.response_status ?? 200,
    } as const;
  });
}

export async function completeKey(
  services: Services,
  scope: KeyScope,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await markIdempotencyKeyDone(services.db, scope, key, status, services.secrets.encrypt(body));
}

/** A refusal as stored under a key: its code and options (the problem's detail, reason, extra members). */
interface StoredRefusal {
  refusal: { code: ErrorCode; options: AppErrorOptions };
}

/**
 * Stores a refusal as the key's response: every retry with the key gets the same refusal (code,
 * detail and members) instead of whatever the intent's later state would answer.
 */
export async function completeKeyWithRefusal(
  services: Services,
  scope: KeyScope,
  key: string,
  err: AppError,
): Promise<void> {
  const stored: StoredRefusal = { refusal: { code: err.code, options: err.options } };
  await completeKey(services, scope, key, err.status, JSON.stringify(stored));
}

/** A stored response replayed: the refusal thrown again, or the success body parsed. */
export function replayStored(claim: { body: string; status: number }): unknown {
  const parsed = JSON.parse(claim.body) as unknown;
  if (claim.status >= 400) {
    const { code, options } = (parsed as StoredRefusal).refusal;
    throw new AppError(code, options);
  }
  return parsed;
}

/** Forgets a claim whose request was refused before anything ran, so the caller may fix the cause and retry. */
export async function releaseKey(services: Services, scope: KeyScope, key: string): Promise<void> {
  await deleteIdempotencyKeyInProgress(services.db, scope, key);
}
