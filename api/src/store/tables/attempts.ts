// Attempts: one row per handoff try to Shopify Flow.
// Owns: attempts. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';
import { insertMany, pgArrayLiteral, type SqlParam } from '../db.ts';

// handoff: the worker's attempts (api/src/handoff/)

/** Opens one attempt per claimed event: [id, event_id, shop_id, trigger, started_at, outcome]. */
export async function insertAttempts(tx: Db, rows: readonly (readonly SqlParam[])[]): Promise<void> {
  await insertMany(tx, 'attempts', ['id', 'event_id', 'shop_id', 'trigger', 'started_at', 'outcome'], rows);
}

/** Closes the in-progress attempts of events whose lease expired (their worker died mid-call). */
export async function abandonAttempts(tx: Db, eventIds: readonly string[], now: number, note: string): Promise<void> {
  await tx.run(
    `UPDATE attempts SET outcome = 'abandoned', finished_at = ?, flow_response = ?
        WHERE event_id IN (${eventIds.map(() => '?').join(', ')}) AND outcome = 'in_progress'`,
    [now, JSON.stringify({ note }), ...eventIds],
  );
}

/** How many of an event's attempts ended in one of `outcomes`. */
export async function countAttemptsWithOutcome(tx: Db, eventId: string, outcomes: readonly string[]): Promise<number> {
  const marks = outcomes.map(() => '?').join(', ');
  const row = await tx.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM attempts WHERE event_id = ? AND outcome IN (${marks})`,
    [eventId, ...outcomes],
  );
  return Number(row?.n ?? 0);
}

/** How one attempt ended. */
export interface AttemptFinish {
  id: string;
  finishedAt: number;
  durationMs: number;
  outcome: string;
  httpStatus: number | null;
  errorCode: string | null;
  flowResponse: string;
}

/**
 * When the call of a finished attempt started: its end less its duration. One source for the
 * three times an attempt shows (issue 42): started_at = finished_at − duration_ms, whatever the
 * time between the claim that opened the attempt and the call (pacing) or the clocks involved.
 */
const startedAt = (a: AttemptFinish): number => a.finishedAt - a.durationMs;

/** Records how one attempt ended. */
export async function finishAttempt(tx: Db, a: AttemptFinish): Promise<void> {
  await tx.run(
    `UPDATE attempts SET started_at = ?, finished_at = ?, duration_ms = ?, outcome = ?, http_status = ?, error_code = ?,
         flow_response = ? WHERE id = ?`,
    [startedAt(a), a.finishedAt, a.durationMs, a.outcome, a.httpStatus, a.errorCode, a.flowResponse, a.id],
  );
}

/**
 * How many attempts ended, as the body of a data-modifying CTE (PostgreSQL), for a statement that writes
 * the events' outcomes too (recordOutcomesBatch): `after` is a condition that reads the CTE written
 * first, so its rows are locked before these. Parameters in order, one array per column.
 */
export function finishAttemptsCte(
  attempts: readonly AttemptFinish[],
  after = 'TRUE',
): { sql: string; params: SqlParam[] } {
  const col = (f: (row: AttemptFinish) => SqlParam) => pgArrayLiteral(attempts.map(f));
  return {
    sql: `UPDATE attempts AS a SET started_at = v.started_at, finished_at = v.finished_at, duration_ms = v.duration_ms,
       outcome = v.outcome, http_status = v.http_status, error_code = v.error_code, flow_response = v.flow_response
     FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::integer[], ?::text[], ?::integer[], ?::text[], ?::text[])
       AS v (id, started_at, finished_at, duration_ms, outcome, http_status, error_code, flow_response)
     WHERE a.id = v.id AND ${after} RETURNING 1`,
    params: [
      col((a) => a.id),
      col(startedAt),
      col((a) => a.finishedAt),
      col((a) => a.durationMs),
      col((a) => a.outcome),
      col((a) => a.httpStatus),
      col((a) => a.errorCode),
      col((a) => a.flowResponse),
    ],
  };
}
