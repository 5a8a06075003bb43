// When a replay is in flight (issue 40, ADR 0410): the one SQL statement of when an event's claim
// in `replay_claims` blocks another replay of it. A read-model fragment, so both the event reads
// (reads/events.ts) and the claims themselves (intents/replay-claims.ts) use it.
import { STORED_TERMINAL_STATES } from '../handoff/outcomes.ts';

const TERMINAL_SQL = STORED_TERMINAL_STATES.map((s) => `'${s}'`).join(', ');
/** Intent states a bulk replay ends in: its runner will make no more replays. */
const ENDED_INTENT_SQL = `'executed', 'cancelled', 'failed', 'refused', 'expired'`;

/**
 * When the claim in the row `replay_claims` (ADR 0410, intents/replay-claims.ts) no longer blocks
 * another replay of its event: its replay is terminal, or it holds no replay and its intent has
 * ended. Written only in the positive (the replay IS terminal, the intent HAS ended): on
 * PostgreSQL an upsert judges the latest version of the row, but reads events and intents as of
 * its statement's start, so a replay or intent too new to be seen must read as "still blocking",
 * never as "gone". Both only ever move forward, so seen late, a claim blocks a moment longer;
 * never less. The one statement of the rule: the claim's takeover and heldClaims
 * (intents/replay-claims.ts) use it as is, event reads through replayInFlightSql.
 */
export const REPLAY_CLAIM_RELEASED = `((replay_claims.replay_event_id IS NOT NULL AND EXISTS (
      SELECT 1 FROM events r WHERE r.id = replay_claims.replay_event_id AND r.state IN (${TERMINAL_SQL})))
   OR (replay_claims.replay_event_id IS NULL AND EXISTS (
      SELECT 1 FROM action_intents h WHERE h.id = replay_claims.intent_id AND h.state IN (${ENDED_INTENT_SQL}))))`;

/**
 * SQL true while another replay of the event whose id is `eventId` (an SQL expression, e.g.
 * `e.id`) is in flight: its claim blocks. Per row read, a primary-key probe of replay_claims, then
 * of the replay event or the intent it names. Event reads select it and their replay_available
 * filter tests it (reads/events.ts); the reason it gives is `replay_in_flight`. A scalar count,
 * not EXISTS: PostgreSQL may turn an EXISTS correlated by one equality into a hashed subplan (or,
 * negated in a filter, an anti join) that reads every claim and every ended intent once per
 * query: 400 ms for a page with 30,000 claims, against 0.3 ms as a count (a subquery with an
 * aggregate is never hashed nor pulled up).
 */
export function replayInFlightSql(eventId: string): string {
  return `((SELECT COUNT(*) FROM replay_claims WHERE replay_claims.event_id = ${eventId} AND NOT ${REPLAY_CLAIM_RELEASED}) > 0)`;
}
