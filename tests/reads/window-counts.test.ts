// The 24-hour window's counts are kept at write time (issue 45, ADR 0313): after a realistic mix of
// writes (intake over real HTTP, deliveries by the worker, a duplicate, no_workflow events and a
// replay that recovers one, a test event, failures, the Shopify app's holds and expiries, an
// erasure, a deleted row) the kept event_window_counts equal a COUNT(*) of the events by the same
// key, and every window read (endpoints, one endpoint, setup's outcomes, diagnostics' states and
// support codes) answers what counting the window's events answered, at windows that start
// mid-hour, on an hour and at the bounds of the first part-hour. Real HTTP, both stores.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { idFloor, newId } from '../../api/src/ids.ts';
import { usagePeriod } from '../../api/src/plans.ts';
import { endpointStateCounts } from '../../api/src/reads/endpoints.ts';
import { senderEventOutcomes, stateCounts } from '../../api/src/reads/readiness.ts';
import { handleForVariant } from '../../api/src/handoff/triggers.ts';
import { EVENT_COLUMNS, eventRow, insertAcceptedEvents } from '../../api/src/store/tables/events/accept.ts';
import { EVENT_KIND_SQL } from '../../api/src/store/tables/events/counts.ts';
import { insertTestEvent } from '../../api/src/store/tables/events/intents.ts';
import { eraseEventBodies, expireHeldEvents, holdWaitingEvents } from '../../api/src/store/tables/events/merchant.ts';
import { releaseHeldEvents } from '../../api/src/store/tables/events/deliver.ts';
import { sweepRetention } from '../../api/src/handoff/lifecycle.ts';
import {
  eventWindowSql,
  recountWindowCounts,
  WINDOW_HOUR_MS,
  windowParams,
} from '../../api/src/store/tables/events/window-counts.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, deliveredEvent, eventState, failedEvents, sendSigned, waitFor } from '../intents/helpers.ts';
import { setWorkflow } from '../shopify/helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const sb = () => server.sandbox as NonNullable<TestServer['sandbox']>;
const db = () => server.runtime.services.db;

/** An intake row as the batch writes it, received at `at`. */
function intakeRow(at: number, state = 'queued') {
  const id = newId('event', at);
  return eventRow({
    id,
    shop_id: sb().shop_id,
    endpoint_id: sb().endpoint_id,
    receipt_id: newId('receipt'),
    request_id: newId('request'),
    state,
    support_code: null,
    external_event_id: `w-${id}`,
    event_type: 'order.paid',
    sender: 'tests',
    body: '{}',
    body_size: 2,
    body_sha256: 'x',
    resource_id: null,
    related_resource_id: null,
    config_version: 1,
    received_at: at,
    updated_at: at,
    next_attempt_at: at + 3_600_000,
    body_expires_at: null,
    retention_state: 'retained',
    duplicate_of: null,
  });
}

const KEY = `shop_id, received_at / ${WINDOW_HOUR_MS} AS hour, endpoint_id, ${EVENT_KIND_SQL} AS kind, state,
  COALESCE(support_code, '') AS support_code, CASE WHEN recovered_by IS NULL THEN 0 ELSE 1 END AS recovered`;
type Row = Record<string, string | number>;
const norm = (rows: Row[]) =>
  rows
    .map((r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [
          k,
          k === 'endpoint_id' || k === 'shop_id' || k === 'kind' || k === 'state' || k === 'support_code'
            ? v
            : Number(v),
        ]),
      ),
    )
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** The kept counts (zeros left out) and a COUNT(*) of the events by the same key. */
async function keptAndCounted() {
  const kept = await db().all<Row>(
    `SELECT shop_id, hour, endpoint_id, kind, state, support_code, recovered, count AS n FROM event_window_counts WHERE count <> 0`,
  );
  const counted = await db().all<Row>(
    `SELECT shop_id, hour, endpoint_id, kind, state, support_code, recovered, COUNT(*) AS n FROM (SELECT ${KEY} FROM events) AS k
      GROUP BY shop_id, hour, endpoint_id, kind, state, support_code, recovered`,
  );
  return { kept: norm(kept), counted: norm(counted) };
}

/** What each window read answered before the counts: the events of the window, counted. */
async function windowReadsByCounting(shopId: string, since: number, endpointId?: string) {
  const ep = endpointId ? ' AND endpoint_id = ?' : '';
  const params = endpointId ? [shopId, since, endpointId] : [shopId, since];
  const byEndpointState = await db().all<Row>(
    `SELECT endpoint_id, state, COUNT(*) AS n FROM events WHERE shop_id = ? AND received_at >= ?${ep} GROUP BY endpoint_id, state`,
    params,
  );
  const codes = await db().all<Row>(
    `SELECT support_code, COUNT(*) AS n FROM events WHERE shop_id = ? AND received_at >= ? AND support_code IS NOT NULL${ep}
      GROUP BY support_code`,
    params,
  );
  const outcomes = await db().all<Row>(
    `SELECT ${EVENT_KIND_SQL} AS kind, state, COALESCE(support_code, '') AS support_code,
       CASE WHEN recovered_by IS NULL THEN 0 ELSE 1 END AS recovered, COUNT(*) AS n
       FROM events WHERE shop_id = ? AND received_at >= ? AND replay_of IS NULL${ep}
      GROUP BY ${EVENT_KIND_SQL}, state, support_code, CASE WHEN recovered_by IS NULL THEN 0 ELSE 1 END`,
    params,
  );
  return { byEndpointState: norm(byEndpointState), codes: norm(codes), outcomes: norm(outcomes) };
}

/** The same three through the window (hourly counts and the first part-hour). */
async function windowReadsByCounts(shopId: string, since: number, endpointId?: string) {
  const sql = eventWindowSql(endpointId !== undefined);
  const params = windowParams(shopId, since, endpointId);
  const byEndpointState = await db().all<Row>(
    `SELECT endpoint_id, state, SUM(n) AS n FROM (${sql}) AS w GROUP BY endpoint_id, state HAVING SUM(n) > 0`,
    params,
  );
  const codes = await db().all<Row>(
    `SELECT support_code, SUM(n) AS n FROM (${sql}) AS w WHERE support_code IS NOT NULL GROUP BY support_code HAVING SUM(n) > 0`,
    params,
  );
  const outcomes = await db().all<Row>(
    `SELECT kind, state, COALESCE(support_code, '') AS support_code, recovered, SUM(n) AS n FROM (${sql}) AS w
      WHERE kind <> 'replay' GROUP BY kind, state, support_code, recovered HAVING SUM(n) > 0`,
    params,
  );
  return { byEndpointState: norm(byEndpointState), codes: norm(codes), outcomes: norm(outcomes) };
}

describe('the window counts kept at write time', () => {
  it('agree with a COUNT(*) of the events after a mix of writes, and every window read answers as counting did', async () => {
    const creds = sb();
    const token = creds.grant_token as string;
    const services = server.runtime.services;
    const now = services.now();
    const handle = handleForVariant(
      (
        await db().get<{ trigger_variant: string }>('SELECT trigger_variant FROM endpoints WHERE id = ?', [
          creds.endpoint_id,
        ])
      )?.trigger_variant as never,
    );
    // Intake over HTTP, delivered by the worker (queued → delivering → delivered), and a duplicate.
    const body = { type: 'order.paid', id: randomUUID() };
    await deliveredEvent(server, body);
    await deliveredEvent(server);
    expect((await sendSigned(server, creds.endpoint_id, creds.signing_secret, body)).status).toBe(200);
    // No workflow: two events end no_workflow; the workflow back on, a replay of one recovers it.
    let clock = Date.now();
    const workflow = async (enabled: boolean) => {
      clock = Math.max(clock + 1, Date.now());
      expect(
        (await setWorkflow(server, creds.shop_domain, handle, enabled, new Date(clock).toISOString())).flowport_status,
      ).toBe(200);
    };
    await workflow(false);
    const lost: string[] = [];
    for (let i = 0; i < 2; i++) {
      const ack = await sendSigned(server, creds.endpoint_id, creds.signing_secret, {
        type: 'order.paid',
        id: randomUUID(),
      });
      expect(ack.status).toBe(202);
      lost.push(ack.json.event_id);
    }
    for (const id of lost)
      await waitFor(async () => ((await eventState(server, id)) === 'no_workflow' ? true : undefined));
    await workflow(true);
    const preview = await api(server, token, 'POST', `/agent/v1/events/${lost[0]}/replay-intents`, {});
    expect(preview.status, preview.text).toBe(201);
    const done = await confirm(server, token, preview.json.id);
    expect(done.status, done.text).toBe(200);
    await waitFor(async () =>
      (await db().get<{ r: string | null }>('SELECT recovered_by AS r FROM events WHERE id = ?', [lost[0] as string]))
        ?.r
        ? true
        : undefined,
    );
    // A test event; failures (the fixture's direct insert, one in the window's first part-hour).
    await db().tx((tx) =>
      insertTestEvent(tx, {
        id: newId('event', now),
        shopId: creds.shop_id,
        endpointId: creds.endpoint_id,
        receiptId: newId('receipt'),
        eventType: 'order.paid',
        sender: 'tests',
        body: '{}',
        bodySize: 2,
        bodySha256: 'x',
        resourceId: null,
        configVersion: 1,
        now: now + 3_600_000, // due later: the worker leaves it queued
        bodyExpiresAt: null,
      }),
    );
    const since = now - 24 * 3_600_000;
    await failedEvents(services, creds.shop_id, creds.endpoint_id, 2);
    await failedEvents(services, creds.shop_id, creds.endpoint_id, 1, { receivedAt: since + 1 });
    // Queued events (due in an hour, so the worker leaves them) around the window's first edge:
    // before it, on it, in the part-hour, on the first whole hour, and a day old.
    const firstHour = Math.ceil(since / WINDOW_HOUR_MS) * WINDOW_HOUR_MS;
    const edges = [since - 1, since, since + 1, firstHour - 1, firstHour, firstHour + 1, now - 48 * 3_600_000];
    const edgeRows = edges.map((at) => intakeRow(at));
    await db().tx((tx) => insertAcceptedEvents(tx, edgeRows));
    // The Shopify app: the uninstall holds what waits, a release queues it again, a hold and a
    // reinstall's expiry fail the old held ones; an erasure drops bodies (no count moves).
    const code = { state: 'held', code: 'FP-H-UNINST', errorCode: 'shop_uninstalled' };
    expect((await holdWaitingEvents(db(), { shopId: creds.shop_id, code, at: now })).changes).toBeGreaterThan(0);
    expect(await db().tx((tx) => releaseHeldEvents(tx, creds.shop_id, now + 3_600_000))).toBeGreaterThan(0);
    await holdWaitingEvents(db(), { shopId: creds.shop_id, code, at: now });
    expect(
      (await expireHeldEvents(db(), { shopId: creds.shop_id, receivedBy: firstHour, code, at: now })).changes,
    ).toBeGreaterThan(0);
    await eraseEventBodies(db(), { shopId: creds.shop_id, retentionState: 'erased', at: now });
    // A row deleted (nothing in Flowport deletes events; the store's count follows all the same).
    expect((await db().run('DELETE FROM events WHERE id = ?', [edgeRows[2]?.[0] as string])).changes).toBe(1);

    const { kept, counted } = await keptAndCounted();
    expect(counted.length).toBeGreaterThan(5);
    expect(kept).toEqual(counted);
    // Kept states moved: delivered, no_workflow recovered and not, failed, held, a replay, a test event.
    const states = new Set(kept.map((r) => `${r.kind}:${r.state}:${r.recovered}`));
    for (const s of [
      'sender:delivered:0',
      'sender:no_workflow:1',
      'duplicate:duplicate_suppressed:0',
      'sender:failed:0',
      'sender:held:0',
      'replay:delivered:0',
      'test:held:0',
    ])
      expect(states, s).toContain(s);

    // Every window read answers as counting the window's events did, wherever the window starts.
    for (const start of [since, since - 1, since + 1, firstHour - 1, firstHour, firstHour + 1, now - 3_600_000]) {
      for (const ep of [undefined, creds.endpoint_id]) {
        const counting = await windowReadsByCounting(creds.shop_id, start, ep);
        expect(counting.byEndpointState.length).toBeGreaterThan(0);
        expect(
          await windowReadsByCounts(creds.shop_id, start, ep),
          `since ${start - since} ms, ${ep ?? 'shop'}`,
        ).toEqual(counting);
      }
      // The reads' own functions: by endpoint and state, by state, setup's outcomes.
      const byEp = await endpointStateCounts(services, creds.shop_id, start);
      const counting = await windowReadsByCounting(creds.shop_id, start);
      const states: Record<string, number> = {};
      for (const r of counting.byEndpointState)
        states[r.state as string] = (states[r.state as string] ?? 0) + (r.n as number);
      expect(
        Object.fromEntries(byEp.get(creds.endpoint_id) ? Object.entries(byEp.get(creds.endpoint_id)!) : []),
      ).toEqual(states);
      expect(await stateCounts(db(), creds.shop_id, start)).toEqual(states);
      const o = await senderEventOutcomes(db(), creds.shop_id, start);
      const senders = counting.outcomes.filter((r) => r.kind !== 'test');
      expect(o.total).toBe(senders.reduce((s, r) => s + (r.n as number), 0));
      expect(o.testEvents).toBe(
        counting.outcomes.filter((r) => r.kind === 'test').reduce((s, r) => s + (r.n as number), 0),
      );
    }

    // A recount (the migration's) gives the same rows.
    await db().tx((tx) => recountWindowCounts(tx));
    expect((await keptAndCounted()).kept).toEqual(counted);
  });

  it('one batch of rows in runs of like and unlike rows (hour, state, support code, month) adds each row to its counts once', async () => {
    // insertAcceptedEvents adds a row like the one before it to the same two counts without
    // building their keys again: every way a row can differ from the one before must still count apart.
    const t = Math.floor((Date.now() - 10 * 86_400_000) / WINDOW_HOUR_MS) * WINDOW_HOUR_MS + 60_000;
    // Ids minted at a past moment (newId never goes back in time): the period counts by the id's time.
    let seq = 0;
    const row = (idAt: number, receivedAt: number, state = 'queued', support: string | null = null) => {
      const r = intakeRow(receivedAt, state);
      r[EVENT_COLUMNS.indexOf('id')] =
        `${idFloor('event', idAt).slice(0, -6)}${randomUUID().replace(/\D/g, '').slice(0, 4)}${String(seq++).padStart(2, '0')}`;
      r[EVENT_COLUMNS.indexOf('support_code')] = support;
      // Not due for a day: the worker must not deliver them (a state change moves their counts).
      r[EVENT_COLUMNS.indexOf('next_attempt_at')] = Date.now() + 86_400_000;
      return r;
    };
    const h = WINDOW_HOUR_MS;
    const rows = [
      row(t, t),
      row(t + 1, t + 1),
      row(t + 2, t + 2),
      row(t + 3, t + 3, 'duplicate_suppressed', 'FP-I-DUP'),
      row(t + 4, t + 4),
      row(t + 5, t + 5, 'queued', 'FP-I-OK'),
      row(t + 6, t + 6, 'queued', 'FP-I-OK'),
      row(t + h, t + h),
      row(t + h + 1, t + h + 1),
      row(t - 40 * 86_400_000, t + 7),
      row(t - 40 * 86_400_000 + 1, t + 8),
      row(t + 9, t + 9),
    ];
    const windowCounts = async () =>
      db().all<Row>(
        'SELECT hour, state, support_code, count AS n FROM event_window_counts WHERE shop_id = ? AND endpoint_id = ? AND hour IN (?, ?)',
        [sb().shop_id, sb().endpoint_id, Math.floor(t / h), Math.floor(t / h) + 1],
      );
    const periods = [usagePeriod(t), usagePeriod(t - 40 * 86_400_000)];
    const eventCounts = async () =>
      db().all<Row>('SELECT period, kind, count AS n FROM event_counts WHERE shop_id = ? AND period IN (?, ?)', [
        sb().shop_id,
        ...periods,
      ]);
    const keyed = (rs: Row[], key: (r: Row) => string) => new Map(rs.map((r) => [key(r), Number(r.n)]));
    const wKey = (r: Row) => `${Number(r.hour)}|${r.state}|${r.support_code}`;
    const eKey = (r: Row) => `${r.period}|${r.kind}`;
    const wBefore = keyed(await windowCounts(), wKey);
    const eBefore = keyed(await eventCounts(), eKey);
    await insertAcceptedEvents(db(), rows);
    const wAdded = [...keyed(await windowCounts(), wKey)].map(([k, n]) => [k, n - (wBefore.get(k) ?? 0)]);
    const eAdded = [...keyed(await eventCounts(), eKey)].map(([k, n]) => [k, n - (eBefore.get(k) ?? 0)]);
    const H = Math.floor(t / h);
    expect(Object.fromEntries(wAdded.filter(([, n]) => n !== 0))).toEqual({
      [`${H}|queued|`]: 7,
      [`${H}|duplicate_suppressed|FP-I-DUP`]: 1,
      [`${H}|queued|FP-I-OK`]: 2,
      [`${H + 1}|queued|`]: 2,
    });
    expect(Object.fromEntries(eAdded.filter(([, n]) => n !== 0))).toEqual({
      [`${periods[0]}|sender`]: 9,
      [`${periods[0]}|duplicate`]: 1,
      [`${periods[1]}|sender`]: 2,
    });
  });

  it('the retention sweep drops the hours no window reads, and the window still answers as counting', async () => {
    const now = Date.now();
    const old = now - 3 * 86_400_000;
    await insertAcceptedEvents(db(), [intakeRow(old), intakeRow(old + 1)]);
    const recent = now - 3_600_000;
    await insertAcceptedEvents(db(), [intakeRow(recent)]);
    const oldHour = Math.floor(old / WINDOW_HOUR_MS);
    const rowsOf = async (hour: number) =>
      (await db().get<{ n: number }>('SELECT COUNT(*) AS n FROM event_window_counts WHERE hour = ?', [hour]))?.n;
    expect(Number(await rowsOf(oldHour))).toBeGreaterThan(0);
    await sweepRetention(server.runtime.services);
    expect(Number(await rowsOf(oldHour))).toBe(0);
    expect(Number(await rowsOf(Math.floor(recent / WINDOW_HOUR_MS)))).toBeGreaterThan(0);
    const since = now - 86_400_000;
    expect(await windowReadsByCounts(sb().shop_id, since)).toEqual(await windowReadsByCounting(sb().shop_id, since));
  });
});
