// Plan usage's event counts are kept at write time (issue 45, ADR 0312): every place an events row
// is inserted (intake's batch over real HTTP and the owner's batch insert, a test event, a replay's
// copy) adds to its shop's count of the event id's period and kind in the same transaction, and
// GET /plan-usage answers what counting the period's events by EVENT_KIND_SQL answered before.
// Migration 1770's recount gives the same rows. Real HTTP, both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idFloor, newId } from '../../api/src/ids.ts';
import { periodBounds } from '../../api/src/plans.ts';
import { EVENT_KIND_SQL } from '../../api/src/store/tables/events/counts.ts';
import { recountEventCounts } from '../../api/src/store/tables/events/counts.ts';
import { eventRow, insertAcceptedEvents } from '../../api/src/store/tables/events/accept.ts';
import { insertReplayCopy, insertTestEvent } from '../../api/src/store/tables/events/intents.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, sendSigned } from '../intents/helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

const sb = () => server.sandbox as NonNullable<TestServer['sandbox']>;

/** An intake row as the batch writes it: a sender's event, or a suppressed duplicate of `of`. */
function intakeRow(id: string, now: number, of: string | null = null) {
  return eventRow({
    id,
    shop_id: sb().shop_id,
    endpoint_id: sb().endpoint_id,
    receipt_id: newId('receipt'),
    request_id: newId('request'),
    state: of ? 'duplicate_suppressed' : 'queued',
    support_code: null,
    external_event_id: `x-${id}`,
    event_type: 'order.paid',
    sender: 'tests',
    body: of ? null : '{}',
    body_size: 2,
    body_sha256: 'x',
    resource_id: null,
    related_resource_id: null,
    config_version: 1,
    received_at: now,
    updated_at: now,
    next_attempt_at: of ? null : now,
    body_expires_at: null,
    retention_state: of ? 'not_retained' : 'retained',
    duplicate_of: of,
  });
}

/** What plan usage answered before the counts were kept: the period's events by id range and kind. */
async function countedFromEvents(now: number) {
  const { start, end } = periodBounds(now);
  const rows = await server.runtime.services.db.all<{ kind: string; n: number | string }>(
    `SELECT kind, COUNT(*) AS n FROM (SELECT ${EVENT_KIND_SQL} AS kind FROM events WHERE shop_id = ? AND id >= ? AND id < ?) AS k
      GROUP BY kind`,
    [sb().shop_id, idFloor('event', start), idFloor('event', end)],
  );
  const n = (kind: string) => Number(rows.find((r) => r.kind === kind)?.n ?? 0);
  return {
    total: rows.reduce((s, r) => s + Number(r.n), 0),
    accepted: n('sender'),
    duplicates_suppressed: n('duplicate'),
    replays: n('replay'),
    test_events: n('test'),
  };
}

const countRows = () =>
  server.runtime.services.db.all<{ shop_id: string; period: string; kind: string; count: number | string }>(
    'SELECT shop_id, period, kind, count FROM event_counts ORDER BY shop_id, period, kind',
  );

describe('plan usage event counts kept at insert', () => {
  it('every insert adds to its count; plan usage answers what counting the events did; a recount agrees', async () => {
    const { db } = server.runtime.services;
    const now = server.runtime.services.now();
    // Intake over HTTP: a sender's event and the same again (a suppressed duplicate).
    const body = { type: 'order.paid', id: 'counts-1' };
    expect((await sendSigned(server, sb().endpoint_id, sb().signing_secret, body)).status).toBe(202);
    expect((await sendSigned(server, sb().endpoint_id, sb().signing_secret, body)).status).toBe(200);
    // The owner's batch insert: two events and a duplicate this period, and one whose id is of the
    // previous period (counted there, not here), in one transaction.
    const first = newId('event', now);
    const lastPeriodId = `${idFloor('event', periodBounds(now).start - 1).slice(0, -1)}1`;
    await db.tx((tx) =>
      insertAcceptedEvents(tx, [
        intakeRow(first, now),
        intakeRow(newId('event', now), now),
        intakeRow(newId('event', now), now, first),
        intakeRow(lastPeriodId, now),
      ]),
    );
    // A test event; a replay of `first`; a replay of the duplicate (no body: nothing copied, not counted).
    await db.tx((tx) =>
      insertTestEvent(tx, {
        id: newId('event', now),
        shopId: sb().shop_id,
        endpointId: sb().endpoint_id,
        receiptId: newId('receipt'),
        eventType: 'order.paid',
        sender: 'tests',
        body: '{}',
        bodySize: 2,
        bodySha256: 'x',
        resourceId: null,
        configVersion: 1,
        now,
        bodyExpiresAt: null,
      }),
    );
    const replay = { originalId: first, shopId: sb().shop_id, configVersion: 1, now };
    expect(await db.tx((tx) => insertReplayCopy(tx, { ...replay, replayId: newId('event', now) }))).toBe(true);
    const dup = await db.get<{ id: string }>('SELECT id FROM events WHERE duplicate_of = ?', [first]);
    expect(
      await db.tx((tx) => insertReplayCopy(tx, { ...replay, originalId: dup?.id as string, replayId: newId('event') })),
    ).toBe(false);

    const expected = await countedFromEvents(now);
    expect(expected).toMatchObject({ accepted: 3, duplicates_suppressed: 2, replays: 1, test_events: 1, total: 7 });
    const usage = await api(server, sb().grant_token as string, 'GET', '/agent/v1/plan-usage');
    expect(usage.status, usage.text).toBe(200);
    expect(usage.json.events).toMatchObject(expected);
    const meter = usage.json.meters.find((m: { meter: string }) => m.meter === 'accepted_events');
    expect(meter.used).toBe(1); // intake's own accept only: the owner's rows bypassed the meter

    // The previous period's count holds the one event minted there.
    const kept = await countRows();
    const previous = kept.filter((r) => r.period !== usage.json.period.id);
    expect(previous.map((r) => [r.kind, Number(r.count)])).toEqual([['sender', 1]]);
    // Migration 1770's recount from the stored events gives the same rows.
    await db.tx((tx) => recountEventCounts(tx));
    expect(await countRows()).toEqual(kept);
  });
});
