// Issue 40: an event's reads say what a replay preview would. While another replay of the event is
// in flight (a single replay not yet terminal, or a bulk replay's item still pending; ADR 0410) the
// detail, the list, the list's replay_available filter, recovery_options and a bulk preview's
// counts all say `replay_in_flight`, as the preview's refusal does; once that replay is delivered,
// the event reads as before (available, with the recent-delivery acknowledgement). The API runs
// without a worker so a replay stays in flight until the test delivers it with a real worker and
// the sandbox's Flow. Both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { replayInFlightSql } from '../../api/src/reads/replay-in-flight.ts';
import { DeliveryWorker } from '../../api/src/handoff/worker.ts';
import { adminBaseUrlFor } from '../../api/src/runtime.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, failedEvents, waitDelivered } from '../intents/helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = server.sandbox?.grant_token as string;
  // A plan with bulk replay and replays enough for the test.
  await server.runtime.services.db.run(`UPDATE shops SET plan = 'scale' WHERE id = ?`, [
    server.sandbox?.shop_id as string,
  ]);
});
afterAll(async () => {
  await server?.close();
});

const sandbox = () => server.sandbox as NonNullable<TestServer['sandbox']>;

/** The event's `replay` as the detail, the list and its replay_available filter say it. */
async function reads(id: string) {
  const detail = await api(server, token, 'GET', `/agent/v1/events/${id}`);
  expect(detail.status, detail.text).toBe(200);
  const listed = await api(server, token, 'GET', '/agent/v1/events?limit=200');
  expect(listed.status, listed.text).toBe(200);
  const item = listed.json.data.find((e: { id: string }) => e.id === id);
  const inList = async (available: boolean) => {
    const r = await api(server, token, 'GET', `/agent/v1/events?limit=200&replay_available=${available}`);
    expect(r.status, r.text).toBe(200);
    for (const e of r.json.data) expect(e.replay.available, e.id).toBe(available);
    return r.json.data.some((e: { id: string }) => e.id === id);
  };
  const option = detail.json.recovery_options.find((o: { action: string }) => o.action === 'replay');
  return {
    detail: detail.json.replay,
    listed: item?.replay,
    filteredAvailable: await inList(true),
    filteredUnavailable: await inList(false),
    option,
  };
}

function expectInFlight(r: Awaited<ReturnType<typeof reads>>) {
  expect(r.detail).toEqual({
    available: false,
    reason: 'replay_in_flight',
    detail: expect.stringContaining('in flight'),
    acknowledgements: [],
  });
  expect(r.listed).toEqual(r.detail);
  expect(r.filteredAvailable).toBe(false);
  expect(r.filteredUnavailable).toBe(true);
  expect(r.option).toMatchObject({ available: false });
  expect(r.option.description).toContain(r.detail.detail);
}

describe('an event with a replay in flight reads replay_in_flight, as its preview answers', () => {
  it('a single replay not yet delivered: detail, list, filter, recovery options and previews agree; delivered, the event reads as before', async () => {
    const { db } = server.runtime.services;
    const sb = sandbox();
    const [x] = (await failedEvents(server.runtime.services, sb.shop_id, sb.endpoint_id, 1, {
      errorCode: 'single_in_flight',
    })) as [string];
    const before = await reads(x);
    expect(before.detail).toEqual({ available: true, reason: null, detail: null, acknowledgements: [] });
    expect(before.filteredAvailable).toBe(true);

    const preview = await api(server, token, 'POST', `/agent/v1/events/${x}/replay-intents`, {});
    expect(preview.status, preview.text).toBe(201);
    const done = await confirm(server, token, preview.json.id);
    expect(done.status, done.text).toBe(200);
    const replay = done.json.result.event_id as string;

    // The replay is queued (no worker): the event has a replay in flight.
    expectInFlight(await reads(x));
    // What the reads say is what the previews answer.
    const again = await api(server, token, 'POST', `/agent/v1/events/${x}/replay-intents`, {});
    expect(again.status, again.text).toBe(409);
    expect(again.json.code).toBe('replay_in_flight');
    const bulk = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'single_in_flight' });
    expect(bulk.status, bulk.text).toBe(409);
    expect(bulk.json.code).toBe('bulk_replay_no_events');
    expect(bulk.json.refused).toEqual({ replay_in_flight: 1 });

    // A real worker hands the replay to the sandbox's Flow: terminal, the claim no longer blocks.
    const worker = new DeliveryWorker(server.runtime.services, {
      adminBaseUrl: (shop) => adminBaseUrlFor(server.runtime.services.config, shop),
    });
    worker.start();
    try {
      await waitDelivered(server, replay);
    } finally {
      await worker.stop();
    }
    const claim = await db.get<{ replay_event_id: string }>(
      'SELECT replay_event_id FROM replay_claims WHERE event_id = ?',
      [x],
    );
    expect(claim?.replay_event_id).toBe(replay);
    // Delivered, the replay recovered the event (ADR 0420): not replayable without both acknowledgements.
    const after = await reads(x);
    expect(after.detail).toMatchObject({
      available: false,
      reason: 'already_recovered',
      acknowledgements: ['acknowledge_recovered', 'acknowledge_recent_delivery'],
    });
    expect(after.listed).toEqual(after.detail);
    expect(after.filteredAvailable).toBe(false);
    expect(after.filteredUnavailable).toBe(true);
    expect(after.option).toMatchObject({ available: false });
    const next = await api(server, token, 'POST', `/agent/v1/events/${x}/replay-intents`, {
      acknowledge_recovered: true,
      acknowledge_recent_delivery: true,
    });
    expect(next.status, next.text).toBe(201);
  });

  it("a bulk replay's pending items: each event reads replay_in_flight, as many as a bulk preview counts; cancelled, they read available", async () => {
    const sb = sandbox();
    const ids = await failedEvents(server.runtime.services, sb.shop_id, sb.endpoint_id, 3, {
      errorCode: 'bulk_in_flight',
    });
    const [other] = (await failedEvents(server.runtime.services, sb.shop_id, sb.endpoint_id, 1, {
      errorCode: 'not_in_the_run',
    })) as [string];
    const bulk = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'bulk_in_flight' });
    expect(bulk.status, bulk.text).toBe(201);
    const confirmed = await confirm(server, token, bulk.json.id);
    expect(confirmed.status, confirmed.text).toBe(200);

    // No runner here: every item is pending, each event claimed by the run.
    for (const id of ids) expectInFlight(await reads(id));
    expect((await reads(other)).detail).toMatchObject({ available: true, reason: null });
    const listed = await api(server, token, 'GET', '/agent/v1/events?limit=200&replay_available=false');
    const inFlight = listed.json.data.filter(
      (e: { id: string; replay: { reason: string } }) => ids.includes(e.id) && e.replay.reason === 'replay_in_flight',
    );
    const preview = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'bulk_in_flight' });
    expect(preview.status, preview.text).toBe(409);
    expect(preview.json.refused).toEqual({ replay_in_flight: inFlight.length });
    expect(inFlight).toHaveLength(3);

    const cancelled = await api(server, token, 'POST', `/agent/v1/action-intents/${bulk.json.id}/cancel`);
    expect(cancelled.json.state, cancelled.text).toBe('cancelled');
    for (const id of ids) {
      const r = await reads(id);
      expect(r.detail).toEqual({ available: true, reason: null, detail: null, acknowledgements: [] });
      expect(r.listed).toEqual(r.detail);
      expect(r.filteredAvailable).toBe(true);
    }
  });

  it('a replay in flight comes before a recent delivery, in the read and in a bulk preview alike', async () => {
    const { db } = server.runtime.services;
    const sb = sandbox();
    const [x] = (await failedEvents(server.runtime.services, sb.shop_id, sb.endpoint_id, 1, {
      errorCode: 'recent_and_in_flight',
    })) as [string];
    // Delivered to Flow a minute ago.
    await db.run(`UPDATE events SET state = 'delivered', delivered_at = ? WHERE id = ?`, [Date.now() - 60_000, x]);
    expect((await reads(x)).detail).toMatchObject({ available: true, reason: 'recent_delivery' });
    const preview = await api(server, token, 'POST', `/agent/v1/events/${x}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(preview.status, preview.text).toBe(201);
    expect((await confirm(server, token, preview.json.id)).status).toBe(200);
    // An acknowledgement would not help now: the read and the bulk preview both say in flight.
    expectInFlight(await reads(x));
    const filter = { state: 'delivered', error_code: 'recent_and_in_flight' };
    for (const body of [filter, { ...filter, acknowledge_recent_delivery: true }]) {
      const bulk = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', body);
      expect(bulk.status, bulk.text).toBe(409);
      expect(bulk.json.refused).toEqual({ replay_in_flight: 1 });
    }
  });
});

describe('the in-flight check a read makes', () => {
  it('probes replay_claims by primary key for each row, never reading every claim or ended intent', async () => {
    const { db } = server.runtime.services;
    const shopId = sandbox().shop_id;
    // Many claims, most of them over (their bulk replays ended), as a store that has replayed a lot.
    const n = 3000;
    await db.tx(async (tx) => {
      for (let i = 0; i < n; i += 500) {
        const ids = Array.from({ length: 500 }, (_, j) => String(i + j).padStart(6, '0'));
        await tx.run(
          `INSERT INTO action_intents (id, shop_id, kind, state, target_type, params_json, params_hash, preview_json, created_at, expires_at)
           VALUES ${ids.map(() => "(?, ?, 'bulk_replay', 'executed', 'shop', '{}', 'h', '{}', 1, 1)").join(', ')}`,
          ids.flatMap((id) => [`int_plan_${id}`, shopId]),
        );
        await tx.run(
          `INSERT INTO replay_claims (event_id, shop_id, intent_id, replay_event_id, claimed_at)
           VALUES ${ids.map(() => '(?, ?, ?, NULL, 1)').join(', ')}`,
          ids.flatMap((id) => [`evt_plan_${id}`, shopId, `int_plan_${id}`]),
        );
      }
    });
    await db.run('ANALYZE');
    const postgres = db.dialect === 'postgres';
    const explain = postgres ? 'EXPLAIN (COSTS OFF)' : 'EXPLAIN QUERY PLAN';
    for (const sql of [
      `SELECT e.id, CASE WHEN ${replayInFlightSql('e.id')} THEN 1 ELSE 0 END AS f FROM events e WHERE e.shop_id = ? ORDER BY e.id DESC LIMIT 51`,
      `SELECT e.id FROM events e WHERE e.shop_id = ? AND NOT ${replayInFlightSql('e.id')} ORDER BY e.id DESC LIMIT 51`,
    ]) {
      const plan = (await db.all<Record<string, string>>(`${explain} ${sql}`, [shopId]))
        .map((r) => r['QUERY PLAN'] ?? r.detail)
        .join('\n');
      if (postgres) {
        expect(plan).toContain('Index Cond: (event_id = e.id)');
        // Neither an anti join nor a hashed subplan reading all claims, or all intents, per query.
        // (This test's events table is tiny: the planner may hash it, and rightly so.)
        expect(plan).not.toMatch(/Seq Scan on (replay_claims|action_intents)|Anti Join/);
      } else {
        expect(plan).toMatch(/SEARCH replay_claims USING INDEX sqlite_autoindex_replay_claims_1 \(event_id=\?\)/);
        expect(plan).not.toMatch(/SCAN (replay_claims|action_intents)/);
      }
    }
  });
});
