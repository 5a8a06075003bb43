// Events (owner: this folder, ADR 0012) — intake's batch insert of a group commit's event rows (tuned: ADR 0301, 0304, 0308); dedupe's keys are in ./dedupe-keys.ts.
import type { Db } from '../../db.ts';
import { insertMany, type SqlParam } from '../../db.ts';
import { addEventCounts, type EventCount, eventKind, eventPeriod, tallyEvent } from './counts.ts';
import { addWindowCounts, tallyWindow, WINDOW_HOUR_MS, type WindowCount } from './window-counts.ts';

// intake: the batch insert of a group commit's event rows (tuned: ADR 0301, 0304, 0308).

export const EVENT_COLUMNS = [
  'id',
  'shop_id',
  'endpoint_id',
  'receipt_id',
  'request_id',
  'state',
  'support_code',
  'external_event_id',
  'event_type',
  'sender',
  'body',
  'body_size',
  'body_sha256',
  'resource_id',
  'related_resource_id',
  'config_version',
  'received_at',
  'updated_at',
  'next_attempt_at',
  'body_expires_at',
  'retention_state',
  'duplicate_of',
] as const;
export type EventInsert = Record<(typeof EVENT_COLUMNS)[number], SqlParam>;
/**
 * On SQLite the body is bound as the request's bytes and stored as TEXT by the cast (they are
 * valid UTF-8: validation decoded them strictly), which spares converting the decoded string back
 * to UTF-8 for the binding. On PostgreSQL the body is bound as the string (the cast does nothing).
 */
const EVENT_PLACEHOLDERS = EVENT_COLUMNS.map((c) => (c === 'body' ? 'CAST(? AS TEXT)' : '?'));

const ID = EVENT_COLUMNS.indexOf('id');
const SHOP_ID = EVENT_COLUMNS.indexOf('shop_id');
const STATE = EVENT_COLUMNS.indexOf('state');
const ENDPOINT_ID = EVENT_COLUMNS.indexOf('endpoint_id');
const SUPPORT_CODE = EVENT_COLUMNS.indexOf('support_code');
const RECEIVED_AT = EVENT_COLUMNS.indexOf('received_at');

/**
 * Writes a batch's event rows (eventRow order) with multi-row INSERTs, just before its COMMIT,
 * and adds them to plan usage's event counts and the 24-hour window's: tallied here, one upsert
 * each for the batch (ADR 0312, 0313). PostgreSQL: one array per column (`unnest`), whatever the
 * row count.
 */
export async function insertAcceptedEvents(tx: Db, rows: readonly (readonly SqlParam[])[]): Promise<void> {
  await insertMany(tx, 'events', EVENT_COLUMNS, rows, EVENT_PLACEHOLDERS, { columnar: true });
  const tally = new Map<string, EventCount>();
  const window = new Map<string, WindowCount>();
  // A batch's rows mostly share every counted fact (one endpoint, state, hour and period): a row
  // like the one before it adds to the same two counts without building their keys again.
  let prev: readonly SqlParam[] | null = null;
  let prevPeriod = '';
  let prevCount: EventCount | null = null;
  let prevWindow: WindowCount | null = null;
  for (const r of rows) {
    const period = eventPeriod(r[ID] as string);
    if (prev !== null && prevCount !== null && prevWindow !== null && period === prevPeriod && sameCounts(prev, r)) {
      prevCount.n++;
      prevWindow.n++;
      continue;
    }
    // Intake's rows are never replays or test events (no replay_of, is_test 0).
    const state = r[STATE] as string;
    const kind = eventKind({ replayOf: null, state, isTest: false });
    prevCount = tallyEvent(tally, r[SHOP_ID] as string, r[ID] as string, kind, period);
    prevWindow = tallyWindow(window, {
      shopId: r[SHOP_ID] as string,
      receivedAt: Number(r[RECEIVED_AT]),
      endpointId: r[ENDPOINT_ID] as string,
      kind,
      state,
      supportCode: r[SUPPORT_CODE] as string | null,
    });
    prev = r;
    prevPeriod = period;
  }
  await addEventCounts(tx, tally.values());
  await addWindowCounts(tx, window);
}

/** Whether two event rows of one period add to the same event count and window count. */
function sameCounts(a: readonly SqlParam[], b: readonly SqlParam[]): boolean {
  return (
    a[SHOP_ID] === b[SHOP_ID] &&
    a[ENDPOINT_ID] === b[ENDPOINT_ID] &&
    a[STATE] === b[STATE] &&
    a[SUPPORT_CODE] === b[SUPPORT_CODE] &&
    Math.floor(Number(a[RECEIVED_AT]) / WINDOW_HOUR_MS) === Math.floor(Number(b[RECEIVED_AT]) / WINDOW_HOUR_MS)
  );
}

/**
 * An event row's values in EVENT_COLUMNS order, written out: a keyed read per column name is a
 * megamorphic lookup V8 cannot inline, on every accepted request. tests/intake/event-row.test.ts
 * checks the order against EVENT_COLUMNS.
 */
export function eventRow(e: EventInsert): SqlParam[] {
  return [
    e.id,
    e.shop_id,
    e.endpoint_id,
    e.receipt_id,
    e.request_id,
    e.state,
    e.support_code,
    e.external_event_id,
    e.event_type,
    e.sender,
    e.body,
    e.body_size,
    e.body_sha256,
    e.resource_id,
    e.related_resource_id,
    e.config_version,
    e.received_at,
    e.updated_at,
    e.next_attempt_at,
    e.body_expires_at,
    e.retention_state,
    e.duplicate_of,
  ];
}
