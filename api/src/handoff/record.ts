// Recording a delivery's outcome: the event's next state and its attempt's row, group-committed
// with the outcomes finishing at the same time (one transaction, one fsync, like intake's batches).
// The event row first, then its attempt: the same order as a re-claim, so two transactions never
// wait on each other's rows in a cycle.
import type { Services } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import type { Batch, GroupCommitter } from '../store/committer.ts';
import { type AttemptFinish, finishAttempt, finishAttemptsCte } from '../store/tables/attempts.ts';
import {
  type EventOutcome,
  holdQueuedEventsOfShop,
  recordOutcomesBatch,
  requeueLeasedEvent,
  setLeasedEventOutcome,
  settleReplayFamily,
} from '../store/tables/events/deliver.ts';
import { markShopDisconnected, markShopUnavailable } from '../store/tables/shops.ts';
import type { ClaimedEvent } from './claim.ts';
import type { FlowCallResult } from './flow-client.ts';
import { countedAttempts } from './hold.ts';
import { releaseShopInTx } from './lifecycle.ts';
import {
  type AttemptOutcome,
  type Classified,
  type RetryPolicy,
  retryDelayMs,
  retryPolicyOf,
  STORED_TERMINAL_STATES,
  SUPPORT_CODES,
  type SupportCodeKey,
  UNAVAILABLE_SHOP_STATUSES,
} from './outcomes.ts';

/**
 * One event's outcome of the common kinds (a final outcome other than a probe's release, or a
 * plain retry), as its row and its attempt's row are written on PostgreSQL with the rest of
 * its group commit (`writeOutcomes`).
 */
interface BatchedOutcome {
  event: EventOutcome;
  attempt: AttemptFinish;
  /** A replay that reached a terminal state: its family's recovery is settled after the batch's rows (ADR 0420). */
  settle?: { shopId: string; eventId: string };
}

/** The batch scratch key of the outcomes waiting for `writeOutcomes`. */
const BATCHED_OUTCOMES = 'handoff-outcomes';

/**
 * The outcomes of this group commit still to be written (PostgreSQL): the first call registers
 * one `writeOutcomes` before the commit.
 */
function batchedOutcomes(batch: Batch): BatchedOutcome[] {
  let rows = batch.scratch.get(BATCHED_OUTCOMES) as BatchedOutcome[] | undefined;
  if (!rows) {
    const r: BatchedOutcome[] = [];
    rows = r;
    batch.scratch.set(BATCHED_OUTCOMES, r);
    batch.beforeCommit((tx) => writeOutcomes(tx, r));
  }
  return rows;
}

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Writes and empties `rows` (PostgreSQL): one statement, the events' `UPDATE` and the attempts'
 * as two data-modifying CTEs, each given one array per column, whatever the count; each statement
 * is a round trip (a delivery cost two, then a group commit two, now one). Per row the same as one event's own statements (`record`): a lost lease is not
 * overwritten, and the event rows come before the attempts, as in a re-claim. Each statement takes
 * its rows in id order (PostgreSQL's plan is a nested loop driven by the unnest, one index look-up
 * per row), so two batches that share rows (a lease taken over while its first holder records)
 * lock them in the same order, not each in its own outcomes' finishing order.
 */
async function writeOutcomes(tx: Db, rows: BatchedOutcome[]): Promise<void> {
  if (rows.length === 0) return;
  const events = rows.map((r) => r.event).sort(byId);
  const attempts = rows.map((r) => r.attempt).sort(byId);
  const settle = rows
    .flatMap((r) => (r.settle ? [r.settle] : []))
    .sort((a, b) => byId({ id: a.eventId }, { id: b.eventId }));
  rows.length = 0;
  await recordOutcomesBatch(tx, events, (after) => finishAttemptsCte(attempts, after));
  for (const s of settle) await settleReplayFamily(tx, { ...s, terminal: STORED_TERMINAL_STATES });
}

/** What one outcome writes, worked out before its transaction. */
interface Outcome {
  ev: ClaimedEvent;
  c: Classified;
  result: FlowCallResult | null;
  now: number;
  policy: RetryPolicy;
  probeIntervalMs: number;
  maybeRan: number;
  attempt: AttemptFinish;
}

/** What recording needs of its worker. */
export interface RecordHost {
  readonly services: Services;
  readonly recorder: GroupCommitter;
  readonly stats: { attempts: Partial<Record<AttemptOutcome, number>> };
}

/** Records one delivery's outcome: the event's next state, its attempt, and a log line. */
export async function recordOutcome(
  host: RecordHost,
  ev: ClaimedEvent,
  c: Classified,
  result: FlowCallResult | null,
  local: Record<string, unknown> | null,
): Promise<void> {
  const { config } = host.services;
  const now = host.services.now();
  host.stats.attempts[c.outcome] = (host.stats.attempts[c.outcome] ?? 0) + 1;
  if (c.outcome === 'delivered')
    host.services.metrics?.intakeToFlowSeconds.observe(Math.max(0, now - Number(ev.received_at)) / 1000);
  const summary = result ? result.summary : { http_status: null, ...local };
  const attemptCode = SUPPORT_CODES[c.support];
  const o: Outcome = {
    ev,
    c,
    result,
    now,
    policy: retryPolicyOf(config.worker),
    probeIntervalMs: config.worker.shopProbeIntervalMs,
    // A call that may have reached Flow (timeout, broken connection) is a possible duplicate whatever happens next.
    maybeRan: c.kind === 'retry' && c.maybeRan ? 1 : 0,
    attempt: {
      id: ev.attemptId,
      finishedAt: now,
      durationMs: Math.round(result?.durationMs ?? 0),
      outcome: c.outcome,
      httpStatus: result?.httpStatus ?? null,
      errorCode: attemptCode.errorCode,
      flowResponse: JSON.stringify(summary),
    },
  };
  await host.recorder.submit((tx, batch) => writeOutcome(tx, batch, o));
  logAttempt(host.services, o);
}

async function writeOutcome(tx: Db, batch: Batch, o: Outcome): Promise<void> {
  const { ev, c, policy } = o;
  // A retry past the schedule fails the event instead (the attempts are read only near its end).
  const exhausted =
    c.kind === 'retry' &&
    ev.attempt_count >= policy.maxAttempts &&
    (await countedAttempts(tx, ev)) >= policy.maxAttempts;
  // PostgreSQL: the common kinds (a final outcome other than a probe's release, a plain retry)
  // are written with the rest of the batch, two statements in all (writeOutcomes). SQLite runs
  // each statement in-process, no round trip: one prepared statement per row is cheaper there.
  const batched = tx.dialect === 'postgres' ? batchedOutcomes(batch) : null;
  if (batched) {
    const row = commonOutcome(o, exhausted);
    if (row) {
      batched.push(row);
      return;
    }
    // A rare kind: the outcomes before it in the batch are written first, so the batch's
    // statements run in the order its outcomes finished (e.g. a 401 holds the shop's queued
    // events, a retry of the same shop recorded before it among them).
    await writeOutcomes(tx, batched);
  }
  const attemptOutcome = await writeEventOutcome(tx, o, exhausted);
  await finishAttempt(tx, { ...o.attempt, outcome: attemptOutcome });
  const settle = replaySettled(o, exhausted);
  if (settle) await settleReplayFamily(tx, { ...settle, terminal: STORED_TERMINAL_STATES });
}

/**
 * A replay whose outcome is terminal (final, or its retries used up): its family's `recovered_by`
 * is settled in the same transaction (ADR 0420). Null for a first delivery: nothing more to write.
 */
function replaySettled(o: Outcome, exhausted: boolean): { shopId: string; eventId: string } | null {
  if (!o.ev.replay) return null;
  const terminal = o.c.kind === 'final' || (o.c.kind === 'retry' && exhausted);
  return terminal ? { shopId: o.ev.shop_id, eventId: o.ev.id } : null;
}

/** The batched rows of a common kind of outcome (PostgreSQL), or null for a rare kind. */
function commonOutcome(o: Outcome, exhausted: boolean): BatchedOutcome | null {
  const { ev, c, now } = o;
  const event = { id: ev.id, leaseOwner: ev.leaseOwner, updatedAt: now, maybeRan: o.maybeRan, deliveredAt: null };
  if (c.kind === 'final' && !(ev.probe && o.result)) {
    const code = SUPPORT_CODES[c.support];
    return {
      event: {
        ...event,
        state: code.state,
        supportCode: code.code,
        errorCode: code.errorCode,
        nextAttemptAt: null,
        final: true,
        deliveredAt: c.outcome === 'delivered' ? now : null,
      },
      attempt: o.attempt,
      settle: replaySettled(o, exhausted) ?? undefined,
    };
  }
  if (c.kind === 'retry' && !exhausted) {
    const attemptCode = SUPPORT_CODES[c.support];
    return {
      event: {
        ...event,
        state: 'queued',
        supportCode: attemptCode.code,
        errorCode: attemptCode.errorCode,
        nextAttemptAt: now + Math.max(retryDelayMs(o.policy, ev.attempt_count), c.notBeforeMs),
        final: false,
      },
      attempt: o.attempt,
    };
  }
  return null;
}

/** Writes the event's side of an outcome, one statement at a time; returns the attempt's outcome. */
async function writeEventOutcome(tx: Db, o: Outcome, exhausted: boolean): Promise<string> {
  const { ev, c, now } = o;
  // The event's state is the support code's (SUPPORT_CODES): final, or held for a disconnected shop.
  const setFinal = (key: SupportCodeKey, delivered: boolean) =>
    setLeasedEventOutcome(tx, {
      id: ev.id,
      leaseOwner: ev.leaseOwner,
      code: SUPPORT_CODES[key],
      deliveredAt: delivered ? now : null,
      now,
      maybeRan: o.maybeRan,
    });
  if (c.kind === 'final') {
    await setFinal(c.support, c.outcome === 'delivered');
    // Shopify took a probe's call: the store is available again, so every held event goes back.
    if (ev.probe && o.result) await releaseShopInTx(tx, ev.shop_id, now, UNAVAILABLE_SHOP_STATUSES);
  } else if (c.kind === 'unavailable') {
    // Shopify refused the store itself (UNAVAILABLE_SHOP): Flow did not run the trigger. The
    // shop is marked (unless a 401 already disconnected it; reconnecting releases everything) and
    // this event and its queued ones are held; the next probe is due one interval from now.
    const marked = await markShopUnavailable(tx, {
      shopId: ev.shop_id,
      status: c.status,
      nextProbeAt: now + o.probeIntervalMs,
      now,
    });
    const hold = marked > 0 ? c.support : 'held';
    await setFinal(hold, false);
    await holdQueuedEventsOfShop(tx, ev.shop_id, SUPPORT_CODES[hold], now);
  } else if (c.kind === 'revoked') {
    // The first 401 for a shop (in any worker process) disconnects it; the conditional
    // UPDATE decides which one that is. A 401 means Flow did not run the trigger, so
    // every event involved is held (none failed): reconnecting releases them all.
    if ((await markShopDisconnected(tx, ev.shop_id, now)) === 0) {
      // Another delivery already saw the 401: this event waits with the others.
      await setFinal('held', false);
      return 'held';
    }
    // This event found the revocation: held too, carrying FP-H-AUTH so it says why.
    await setFinal('token_revoked', false);
    await holdQueuedEventsOfShop(tx, ev.shop_id, SUPPORT_CODES.held, now);
  } else if (exhausted) {
    await setFinal('exhausted', false);
  } else {
    const delay = Math.max(retryDelayMs(o.policy, ev.attempt_count), c.notBeforeMs);
    await requeueLeasedEvent(tx, {
      id: ev.id,
      leaseOwner: ev.leaseOwner,
      code: SUPPORT_CODES[c.support],
      nextAttemptAt: now + delay,
      now,
      maybeRan: o.maybeRan,
    });
  }
  return c.outcome;
}

function logAttempt(services: Services, o: Outcome): void {
  const log = services.log;
  if (!log?.isLevelEnabled('info')) return;
  const { ev, c, result } = o;
  log.info(
    {
      kind: 'handoff',
      shop_id: ev.shop_id,
      endpoint_id: ev.endpoint_id,
      event_id: ev.id,
      attempt_id: ev.attemptId,
      attempt: ev.attempt_count,
      outcome: c.outcome,
      http_status: result?.httpStatus ?? null,
      support_code: SUPPORT_CODES[c.support].code,
      duration_ms: Math.round((result?.durationMs ?? 0) * 1e3) / 1e3,
    },
    'handoff attempt',
  );
}
