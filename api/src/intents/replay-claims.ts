// One replay in flight per event, whoever asks (issue 40, ADR 0410). An event is claimed in
// `replay_claims` (its primary key) by the intent that replays it, in the same transaction that
// confirms that intent: a single replay with the replay event it makes, a bulk replay for each
// item it freezes (the runner binds the replay it makes to the claim, and releases the claim of an
// item it refuses; a cancel releases those of the items left). A second claim of the same event
// conflicts, and takes the row over only when the claim held no longer blocks. The store decides,
// on both stores: a conditional upsert, never a read and then a write.
import { AppError } from '../errors/problem.ts';
import { REPLAY_CLAIM_RELEASED } from '../reads/replay-in-flight.ts';
import type { Db } from '../store/db.ts';
import {
  bindReplayClaim,
  deleteIntentReplayClaims,
  deleteReplayClaim,
  findBlockingReplayClaims,
  type ReplayClaimHolder,
  upsertReplayClaim,
  upsertReplayClaims,
} from '../store/tables/intents.ts';

// When a claim stops blocking is one condition, shared with the event reads (reads/replay-in-flight.ts).
const RELEASED = REPLAY_CLAIM_RELEASED;

/** Claims one event for a single replay and the replay event it makes; false when another holds it. */
export async function claimReplay(
  tx: Db,
  c: { eventId: string; shopId: string; intentId: string; replayEventId: string; now: number },
): Promise<boolean> {
  return upsertReplayClaim(tx, c, RELEASED);
}

/**
 * Claims events for a bulk replay's items (no replay yet). The ones another claim holds stay
 * theirs: the caller finds which by reading back the claims its intent got.
 */
export async function claimReplays(
  tx: Db,
  c: { eventIds: readonly string[]; shopId: string; intentId: string; now: number },
): Promise<void> {
  await upsertReplayClaims(tx, c, RELEASED);
}

/**
 * Binds the replay a bulk replay's runner makes to the claim its intent holds. False when the
 * intent does not hold the event's claim (then the runner must not replay it).
 */
export async function bindReplay(tx: Db, eventId: string, intentId: string, replayEventId: string): Promise<boolean> {
  return bindReplayClaim(tx, eventId, intentId, replayEventId);
}

/** Releases an intent's claim on an event it did not replay (its item refused). */
export async function releaseClaim(tx: Db, eventId: string, intentId: string): Promise<void> {
  await deleteReplayClaim(tx, eventId, intentId);
}

/** Releases every claim of an intent that holds no replay (a bulk replay cancelled or finished). */
export async function releaseIntentClaims(tx: Db, intentId: string): Promise<void> {
  await deleteIntentReplayClaims(tx, intentId);
}

/** The claims that still block, of these events (for previews and refusals). */
export async function heldClaims(db: Db, eventIds: readonly string[]): Promise<Map<string, ReplayClaimHolder>> {
  const out = new Map<string, ReplayClaimHolder>();
  for (const r of await findBlockingReplayClaims(db, eventIds, RELEASED)) out.set(r.event_id, r);
  return out;
}

/** The refusal of a replay of an event another replay holds, naming what holds it. */
export function replayInFlight(eventId: string, holder: ReplayClaimHolder | undefined): AppError {
  const by = holder?.intent_id ? ` (intent ${holder.intent_id})` : '';
  const what = !holder
    ? 'another replay of it is in flight'
    : holder.replay_event_id
      ? `its replay ${holder.replay_event_id}${by} is ${holder.replay_state ?? 'not finished'}`
      : `it is pending in bulk replay ${holder.intent_id}, which has not replayed it yet`;
  return new AppError('replay_in_flight', {
    detail: `Event ${eventId} already has a replay in flight: ${what}. One replay at a time: wait until that one is delivered, no_workflow or failed (or cancel the bulk replay), then preview again if another run is really intended.`,
    reason: 'Another replay of this event is in flight.',
    extra: {
      event_id: eventId,
      held_by_intent_id: holder?.intent_id ?? null,
      replay_event_id: holder?.replay_event_id ?? null,
    },
  });
}

/** Refuses with replay_in_flight when another claim holds the event. */
export async function assertNoReplayInFlight(db: Db, eventId: string): Promise<void> {
  const held = (await heldClaims(db, [eventId])).get(eventId);
  if (held) throw replayInFlight(eventId, held);
}
