// Action intents: previews and confirmations, idempotency keys, bulk replay runs and items, replay claims, diagnostics shares.
// Owns: action_intents, idempotency_keys, bulk_replay_items, bulk_replay_runs, replay_claims, diagnostics_shares. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// metrics: action intents by kind and state, for /metrics gauges.

/** Action intents per kind and state (store-wide). */
export async function countIntentsByKindAndState(db: Db): Promise<{ kind: string; state: string; n: number }[]> {
  return db.all<{ kind: string; state: string; n: number }>(
    'SELECT kind, state, COUNT(*) AS n FROM action_intents GROUP BY kind, state',
  );
}

// intents: action intents, idempotency keys, bulk replay items and runs, replay claims, diagnostics shares.

/** The kind of one of a shop's action intents, or undefined (another shop's intent is not found). */
export async function findIntentKind(db: Db, shopId: string, intentId: string): Promise<string | undefined> {
  const row = await db.get<{ kind: string }>('SELECT kind FROM action_intents WHERE id = ? AND shop_id = ?', [
    intentId,
    shopId,
  ]);
  return row?.kind;
}

/** A bulk replay's items counted by status and reason. */
export async function countBulkReplayItems(
  db: Db,
  intentId: string,
): Promise<{ status: string; reason: string | null; n: number | string }[]> {
  return db.all<{ status: string; reason: string | null; n: number | string }>(
    'SELECT status, reason, COUNT(*) AS n FROM bulk_replay_items WHERE intent_id = ? GROUP BY status, reason',
    [intentId],
  );
}

/** A bulk replay run's rate, or undefined before it runs. */
export async function findBulkReplayRate(db: Db, intentId: string): Promise<number | undefined> {
  const run = await db.get<{ rate_per_second: number | string }>(
    'SELECT rate_per_second FROM bulk_replay_runs WHERE intent_id = ?',
    [intentId],
  );
  return run ? Number(run.rate_per_second) : undefined;
}

/** Whose idempotency key it is: a key is unique per shop, grant and operation. */
export interface KeyScope {
  shopId: string;
  grantId: string;
  operationId: string;
}

export interface IdempotencyKeyRow {
  request_hash: string;
  state: string;
  response_status: number | null;
  response_body: string | null;
  created_at: number | string;
}

const WHERE_KEY = 'shop_id = ? AND grant_id = ? AND operation_id = ? AND idem_key = ?';
const keyParams = (scope: KeyScope, key: string) => [scope.shopId, scope.grantId, scope.operationId, key];

/** Forgets a shop's idempotency keys created before `before`. */
export async function pruneIdempotencyKeys(tx: Db, shopId: string, before: number): Promise<void> {
  await tx.run('DELETE FROM idempotency_keys WHERE shop_id = ? AND created_at < ?', [shopId, before]);
}

/** Claims a key (in_progress) for a request hash; false when the key exists already. */
export async function insertIdempotencyKey(
  tx: Db,
  scope: KeyScope,
  key: string,
  hash: string,
  now: number,
): Promise<boolean> {
  const inserted = await tx.run(
    `INSERT INTO idempotency_keys (shop_id, grant_id, operation_id, idem_key, request_hash, state, created_at)
       VALUES (?, ?, ?, ?, ?, 'in_progress', ?) ON CONFLICT (shop_id, grant_id, operation_id, idem_key) DO NOTHING`,
    [...keyParams(scope, key), hash, now],
  );
  return inserted.changes === 1;
}

export async function findIdempotencyKey(db: Db, scope: KeyScope, key: string): Promise<IdempotencyKeyRow | undefined> {
  return db.get<IdempotencyKeyRow>(`SELECT * FROM idempotency_keys WHERE ${WHERE_KEY}`, keyParams(scope, key));
}

/** Stores a key's (sealed) response: done. */
export async function markIdempotencyKeyDone(
  db: Db,
  scope: KeyScope,
  key: string,
  status: number,
  sealedBody: string,
): Promise<void> {
  await db.run(
    `UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ? WHERE ${WHERE_KEY}`,
    [status, sealedBody, ...keyParams(scope, key)],
  );
}

/** Forgets a key still in progress. */
export async function deleteIdempotencyKeyInProgress(db: Db, scope: KeyScope, key: string): Promise<void> {
  await db.run(`DELETE FROM idempotency_keys WHERE ${WHERE_KEY} AND state = 'in_progress'`, keyParams(scope, key));
}

// Replay claims (ADR 0410). `released` is the SQL condition under which a claim no longer blocks
// (REPLAY_CLAIM_RELEASED, reads/replay-in-flight.ts): the one statement of the rule, passed in.

const UPSERT_CLAIM = `INSERT INTO replay_claims (event_id, shop_id, intent_id, replay_event_id, claimed_at) VALUES `;
const takeOver = (released: string) => ` ON CONFLICT (event_id) DO UPDATE SET shop_id = excluded.shop_id, intent_id = excluded.intent_id,
    replay_event_id = excluded.replay_event_id, claimed_at = excluded.claimed_at
  WHERE ${released}`;

/** Claims one event for a single replay and its replay event; false when another claim holds it. */
export async function upsertReplayClaim(
  tx: Db,
  c: { eventId: string; shopId: string; intentId: string; replayEventId: string; now: number },
  released: string,
): Promise<boolean> {
  const r = await tx.run(`${UPSERT_CLAIM}(?, ?, ?, ?, ?)${takeOver(released)}`, [
    c.eventId,
    c.shopId,
    c.intentId,
    c.replayEventId,
    c.now,
  ]);
  return r.changes === 1;
}

/** Claims events (no replay yet) for a bulk replay; the ones another claim holds stay theirs. */
export async function upsertReplayClaims(
  tx: Db,
  c: { eventIds: readonly string[]; shopId: string; intentId: string; now: number },
  released: string,
): Promise<void> {
  const CHUNK = 200;
  for (let i = 0; i < c.eventIds.length; i += CHUNK) {
    const part = c.eventIds.slice(i, i + CHUNK);
    await tx.run(
      `${UPSERT_CLAIM}${part.map(() => '(?, ?, ?, NULL, ?)').join(', ')}${takeOver(released)}`,
      part.flatMap((id) => [id, c.shopId, c.intentId, c.now]),
    );
  }
}

/** Binds a replay event to the claim the intent holds; false when it holds none on the event. */
export async function bindReplayClaim(
  tx: Db,
  eventId: string,
  intentId: string,
  replayEventId: string,
): Promise<boolean> {
  const r = await tx.run(
    'UPDATE replay_claims SET replay_event_id = ? WHERE event_id = ? AND intent_id = ? AND replay_event_id IS NULL',
    [replayEventId, eventId, intentId],
  );
  return r.changes === 1;
}

/** Deletes an intent's claim on an event it holds no replay for. */
export async function deleteReplayClaim(tx: Db, eventId: string, intentId: string): Promise<void> {
  await tx.run('DELETE FROM replay_claims WHERE event_id = ? AND intent_id = ? AND replay_event_id IS NULL', [
    eventId,
    intentId,
  ]);
}

/** Deletes every claim of an intent that holds no replay. */
export async function deleteIntentReplayClaims(tx: Db, intentId: string): Promise<void> {
  await tx.run('DELETE FROM replay_claims WHERE intent_id = ? AND replay_event_id IS NULL', [intentId]);
}

export interface ReplayClaimHolder {
  event_id: string;
  intent_id: string | null;
  replay_event_id: string | null;
  replay_state: string | null;
}

/** The claims of these events that still block (not `released`). */
export async function findBlockingReplayClaims(
  db: Db,
  eventIds: readonly string[],
  released: string,
): Promise<ReplayClaimHolder[]> {
  const out: ReplayClaimHolder[] = [];
  const CHUNK = 500;
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const part = eventIds.slice(i, i + CHUNK);
    out.push(
      ...(await db.all<ReplayClaimHolder>(
        `SELECT replay_claims.event_id, replay_claims.intent_id, replay_claims.replay_event_id, e.state AS replay_state
           FROM replay_claims LEFT JOIN events e ON e.id = replay_claims.replay_event_id
          WHERE replay_claims.event_id IN (${part.map(() => '?').join(', ')}) AND NOT ${released}`,
        part,
      )),
    );
  }
  return out;
}
