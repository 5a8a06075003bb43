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
): Promise<{ status: string; reason: string | null; replay_state: string | null; n: number | string }[]> {
  // Each replay made is counted by its event's state now (the events folder owns that row).
  return db.all<{ status: string; reason: string | null; replay_state: string | null; n: number | string }>(
    `SELECT i.status, i.reason, r.state AS replay_state, COUNT(*) AS n
       FROM bulk_replay_items i LEFT JOIN events r ON r.id = i.replay_event_id
      WHERE i.intent_id = ? GROUP BY i.status, i.reason, r.state`,
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
const takeOver = (
  released: string,
) => ` ON CONFLICT (event_id) DO UPDATE SET shop_id = excluded.shop_id, intent_id = excluded.intent_id,
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

// Diagnostics shares.

/** A frozen diagnostics share as its link reads it. */
export interface SharedDiagnosticsRow {
  id: string;
  bundle_json: string;
  expires_at: number | string;
  revoked_at: number | string | null;
}

export async function insertDiagnosticsShare(
  tx: Db,
  s: { id: string; shopId: string; tokenHash: string; bundleJson: string; now: number; expiresAt: number },
): Promise<void> {
  await tx.run(
    'INSERT INTO diagnostics_shares (id, shop_id, token_hash, bundle_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
    [s.id, s.shopId, s.tokenHash, s.bundleJson, s.now, s.expiresAt],
  );
}

/** The share whose token hashes to `tokenHash` (expired or revoked ones too). */
export async function findDiagnosticsShareByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<SharedDiagnosticsRow | undefined> {
  return db.get<SharedDiagnosticsRow>(
    'SELECT id, bundle_json, expires_at, revoked_at FROM diagnostics_shares WHERE token_hash = ?',
    [tokenHash],
  );
}

// Bulk replay items and runs.

/** Freezes a bulk replay's events as its pending items, numbered in run order. */
export async function insertBulkReplayItems(tx: Db, intentId: string, eventIds: readonly string[]): Promise<void> {
  const CHUNK = 200;
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const part = eventIds.slice(i, i + CHUNK);
    await tx.run(
      `INSERT INTO bulk_replay_items (intent_id, seq, event_id, status) VALUES ${part.map(() => "(?, ?, ?, 'pending')").join(', ')}`,
      part.flatMap((id, j) => [intentId, i + j, id]),
    );
  }
}

/** Refuses (replay_in_flight) the pending items whose event the intent did not get the claim of. */
export async function refuseUnclaimedBulkReplayItems(tx: Db, intentId: string, now: number): Promise<void> {
  await tx.run(
    `UPDATE bulk_replay_items SET status = 'refused', reason = 'replay_in_flight', finished_at = ?
        WHERE intent_id = ? AND status = 'pending'
          AND NOT EXISTS (SELECT 1 FROM replay_claims c WHERE c.event_id = bulk_replay_items.event_id AND c.intent_id = ?)`,
    [now, intentId, intentId],
  );
}

export async function insertBulkReplayRun(
  tx: Db,
  r: { intentId: string; shopId: string; ratePerSecond: number; now: number },
): Promise<void> {
  await tx.run(
    'INSERT INTO bulk_replay_runs (intent_id, shop_id, rate_per_second, started_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    [r.intentId, r.shopId, r.ratePerSecond, r.now, r.now],
  );
}

/** Up to 5 confirmed bulk replays no other live runner holds, oldest first. */
export async function listRunnableBulkReplays(db: Db, now: number, owner: string): Promise<{ intent_id: string }[]> {
  return db.all<{ intent_id: string }>(
    `SELECT r.intent_id FROM bulk_replay_runs r JOIN action_intents i ON i.id = r.intent_id
          WHERE i.state = 'confirmed' AND (r.lease_owner IS NULL OR r.lease_expires_at < ? OR r.lease_owner = ?)
          ORDER BY r.started_at LIMIT 5`,
    [now, owner],
  );
}

/** Leases a run to `owner` until `until` (or renews its lease); false when another holds it. */
export async function leaseBulkReplayRun(
  db: Db,
  intentId: string,
  owner: string,
  now: number,
  until: number,
): Promise<boolean> {
  const r = await db.run(
    `UPDATE bulk_replay_runs SET lease_owner = ?, lease_expires_at = ?, updated_at = ?
        WHERE intent_id = ? AND (lease_owner IS NULL OR lease_expires_at < ? OR lease_owner = ?)`,
    [owner, until, now, intentId, now, owner],
  );
  return r.changes === 1;
}

export async function findBulkReplayRun(
  db: Db,
  intentId: string,
): Promise<{ shop_id: string; rate_per_second: number | string; params_json: string | null } | undefined> {
  return db.get<{ shop_id: string; rate_per_second: number | string; params_json: string | null }>(
    `SELECT r.shop_id, r.rate_per_second, a.params_json FROM bulk_replay_runs r
       LEFT JOIN action_intents a ON a.id = r.intent_id WHERE r.intent_id = ?`,
    [intentId],
  );
}

/** The next pending items of a run, in order. */
export async function listPendingBulkReplayItems(
  db: Db,
  intentId: string,
  limit: number,
): Promise<{ seq: number | string; event_id: string }[]> {
  return db.all<{ seq: number | string; event_id: string }>(
    `SELECT seq, event_id FROM bulk_replay_items WHERE intent_id = ? AND status = 'pending' ORDER BY seq LIMIT ${Number(limit)}`,
    [intentId],
  );
}

/** Takes a pending item (marks it replayed); false when it is no longer pending. */
export async function takeBulkReplayItem(tx: Db, intentId: string, seq: number, now: number): Promise<boolean> {
  const claimed = await tx.run(
    `UPDATE bulk_replay_items SET status = 'replayed', finished_at = ? WHERE intent_id = ? AND seq = ? AND status = 'pending'`,
    [now, intentId, seq],
  );
  return claimed.changes === 1;
}

/** Records why a taken item is refused after all. */
export async function setBulkReplayItemRefused(tx: Db, intentId: string, seq: number, reason: string): Promise<void> {
  await tx.run('UPDATE bulk_replay_items SET status = ?, reason = ? WHERE intent_id = ? AND seq = ?', [
    'refused',
    reason,
    intentId,
    seq,
  ]);
}

/** Refuses an item still pending; false when it is not pending any more. */
export async function refusePendingBulkReplayItem(
  tx: Db,
  intentId: string,
  seq: number,
  reason: string,
  now: number,
): Promise<boolean> {
  const r = await tx.run(
    `UPDATE bulk_replay_items SET status = 'refused', reason = ?, finished_at = ? WHERE intent_id = ? AND seq = ? AND status = 'pending'`,
    [reason, now, intentId, seq],
  );
  return r.changes === 1;
}

export async function setBulkReplayItemReplay(
  tx: Db,
  intentId: string,
  seq: number,
  replayEventId: string,
): Promise<void> {
  await tx.run('UPDATE bulk_replay_items SET replay_event_id = ? WHERE intent_id = ? AND seq = ?', [
    replayEventId,
    intentId,
    seq,
  ]);
}

/** Cancels a bulk replay's pending items. */
export async function cancelPendingBulkReplayItems(tx: Db, intentId: string, now: number): Promise<void> {
  await tx.run(
    `UPDATE bulk_replay_items SET status = 'cancelled', finished_at = ? WHERE intent_id = ? AND status = 'pending'`,
    [now, intentId],
  );
}

export async function releaseBulkReplayRunLease(tx: Db, intentId: string, now: number): Promise<void> {
  await tx.run(
    'UPDATE bulk_replay_runs SET lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE intent_id = ?',
    [now, intentId],
  );
}

// Action intents: the engine's rows and its conditional state moves.

/** One of a shop's intents, as stored (the caller names the row type: intents/types.ts IntentRow). */
export async function findShopIntent<T>(db: Db, shopId: string, intentId: string): Promise<T | undefined> {
  return db.get<T>('SELECT * FROM action_intents WHERE id = ? AND shop_id = ?', [intentId, shopId]);
}

/** A new previewed intent. */
export async function insertPreviewedIntent(
  tx: Db,
  i: {
    id: string;
    shopId: string;
    kind: string;
    targetType: string;
    targetId: string | null;
    paramsJson: string;
    paramsHash: string;
    previewJson: string;
    createdByGrant: string;
    now: number;
    expiresAt: number;
  },
): Promise<void> {
  await tx.run(
    `INSERT INTO action_intents (id, shop_id, kind, state, target_type, target_id, params_json, params_hash, preview_json,
         created_by_grant, created_at, expires_at)
       VALUES (?, ?, ?, 'previewed', ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      i.id,
      i.shopId,
      i.kind,
      i.targetType,
      i.targetId,
      i.paramsJson,
      i.paramsHash,
      i.previewJson,
      i.createdByGrant,
      i.now,
      i.expiresAt,
    ],
  );
}

/** Moves a previewed intent to confirmed; false when it is not previewed any more. */
export async function markIntentConfirmed(
  tx: Db,
  id: string,
  by: { grantId: string; requestId: string },
  now: number,
): Promise<boolean> {
  const claimed = await tx.run(
    `UPDATE action_intents SET state = 'confirmed', confirmed_by_grant = ?, confirmed_request_id = ?, confirmed_at = ?
      WHERE id = ? AND state = 'previewed'`,
    [by.grantId, by.requestId, now, id],
  );
  return claimed.changes === 1;
}

/** Stores the result of an intent still running (a bulk replay). */
export async function setIntentResult(tx: Db, id: string, resultJson: string): Promise<void> {
  await tx.run('UPDATE action_intents SET result_json = ? WHERE id = ?', [resultJson, id]);
}

/** Marks an intent executed with its result. */
export async function markIntentExecuted(tx: Db, id: string, now: number, resultJson: string): Promise<void> {
  await tx.run(`UPDATE action_intents SET state = 'executed', finished_at = ?, result_json = ? WHERE id = ?`, [
    now,
    resultJson,
    id,
  ]);
}

/** Marks a confirmed intent (a bulk replay) executed; false when it is not confirmed (cancelled meanwhile). */
export async function markConfirmedIntentExecuted(
  tx: Db,
  id: string,
  now: number,
  resultJson: string,
): Promise<boolean> {
  const done = await tx.run(
    `UPDATE action_intents SET state = 'executed', finished_at = ?, result_json = ? WHERE id = ? AND state = 'confirmed'`,
    [now, resultJson, id],
  );
  return done.changes === 1;
}

/** Refuses a previewed intent with an error code. */
export async function markIntentRefused(tx: Db, id: string, code: string, now: number): Promise<void> {
  await tx.run(
    `UPDATE action_intents SET state = 'refused', error_code = ?, finished_at = ? WHERE id = ? AND state = 'previewed'`,
    [code, now, id],
  );
}

/** A previewed intent failed in execution (internal_error), confirmed by this grant. */
export async function markIntentFailed(tx: Db, id: string, grantId: string, now: number): Promise<void> {
  await tx.run(
    `UPDATE action_intents SET state = 'failed', error_code = 'internal_error', confirmed_by_grant = ?, confirmed_at = ?, finished_at = ?
          WHERE id = ? AND state = 'previewed'`,
    [grantId, now, now, id],
  );
}

/** Records a previewed intent's expiry. */
export async function markIntentExpired(db: Db, id: string): Promise<void> {
  await db.run(`UPDATE action_intents SET state = 'expired' WHERE id = ? AND state = 'previewed'`, [id]);
}

/** Cancels an intent in state `from`; false when it is in another state. */
export async function markIntentCancelled(
  tx: Db,
  id: string,
  from: 'previewed' | 'confirmed',
  now: number,
): Promise<boolean> {
  const r = await tx.run(`UPDATE action_intents SET state = 'cancelled', finished_at = ? WHERE id = ? AND state = ?`, [
    now,
    id,
    from,
  ]);
  return r.changes === 1;
}
