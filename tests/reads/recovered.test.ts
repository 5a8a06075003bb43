// Issue 42, part A: recovered is visible. A workflow is turned off in the sandbox shop, events end
// no_workflow without a call to Shopify, the workflow is turned on again and the events are
// replayed as an agent would. Then every read tells the same story: an original whose replay (at
// any depth) reached Flow says `recovered_by` in the list and the detail, cannot be replayed
// without `acknowledge_recovered`, is filtered by `recovered`, is left out of a bulk replay
// preview, clears setup's recent_deliveries check, and its recovery options do not ask to deploy
// a workflow Flow says is enabled. Real HTTP through the app, both stores.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORED_TERMINAL_STATES } from '../../api/src/handoff/outcomes.ts';
import { handleForVariant } from '../../api/src/handoff/triggers.ts';
import { BACKFILL_TERMINAL_STATES, backfillRecoveredBy } from '../../api/src/store/tables/events/deliver.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import {
  api,
  confirm,
  deliveredEvent,
  eventState,
  failedEvents,
  sendSigned,
  waitDelivered,
  waitFor,
} from '../intents/helpers.ts';
import { setWorkflow } from '../shopify/helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let token: string;
let handle: string;
beforeAll(async () => {
  server = await startTestServer();
  token = server.sandbox?.grant_token as string;
  const ep = await server.runtime.services.db.get<{ trigger_variant: string }>(
    'SELECT trigger_variant FROM endpoints WHERE id = ?',
    [server.sandbox?.endpoint_id as string],
  );
  handle = handleForVariant(ep?.trigger_variant as never);
});
afterAll(async () => {
  await server?.close();
});

const shop = () => server.sandbox?.shop_domain as string;
let clock = 0;
/** Turns the sandbox workflow on or off; Flow's lifecycle callback follows, dated now (after the last one). */
async function workflow(enabled: boolean) {
  clock = Math.max(clock + 1, Date.now());
  const r = await setWorkflow(server, shop(), handle, enabled, new Date(clock).toISOString());
  expect(r.flowport_status).toBe(200);
}

/** A sender event sent while no workflow is enabled: it ends no_workflow (FP-H-NOFL). */
async function noWorkflowEvent(body: Record<string, unknown> = { type: 'order.paid', id: randomUUID() }) {
  const creds = server.sandbox!;
  const ack = await sendSigned(server, creds.endpoint_id, creds.signing_secret, body);
  expect(ack.status).toBe(202);
  const id = ack.json.event_id as string;
  await waitFor(async () => ((await eventState(server, id)) === 'no_workflow' ? true : undefined));
  return id;
}

/** Previews and confirms a replay of `id`; returns the replay's id. */
async function replay(id: string, body: Record<string, unknown> = {}) {
  const preview = await api(server, token, 'POST', `/agent/v1/events/${id}/replay-intents`, body);
  expect(preview.status, preview.text).toBe(201);
  const done = await confirm(server, token, preview.json.id);
  expect(done.status, done.text).toBe(200);
  return done.json.result.event_id as string;
}

const get = async (id: string) => {
  const r = await api(server, token, 'GET', `/agent/v1/events/${id}`);
  expect(r.status, r.text).toBe(200);
  return r.json;
};
const list = async (query: string) => {
  const r = await api(server, token, 'GET', `/agent/v1/events?limit=200&${query}`);
  expect(r.status, r.text).toBe(200);
  return r.json.data as any[];
};

// The story: A and C recovered (C through a replay of a replay), B still no_workflow, D delivered
// first time, a suppressed duplicate of D.
let A: string;
let A1: string;
let B: string;
let C: string;
let C1: string;
let C2: string;
let D: string;
let dup: string;

describe('recovered events', () => {
  beforeAll(async () => {
    await workflow(false);
    A = await noWorkflowEvent();
    B = await noWorkflowEvent();
    C = await noWorkflowEvent();
    C1 = await replay(C); // still off: the replay ends no_workflow too
    await waitFor(async () => ((await eventState(server, C1)) === 'no_workflow' ? true : undefined));
    await workflow(true);
    A1 = await replay(A);
    await waitDelivered(server, A1);
    C2 = await replay(C1);
    await waitDelivered(server, C2);
    const dBody = { type: 'order.paid', id: randomUUID() };
    D = await deliveredEvent(server, dBody);
    const creds = server.sandbox!;
    const second = await sendSigned(server, creds.endpoint_id, creds.signing_secret, dBody);
    dup = (await server.runtime.services.db.get<{ id: string }>('SELECT id FROM events WHERE duplicate_of = ?', [D]))
      ?.id as string;
    expect(second.json.duplicate_of).toBe(D);
  });

  it('the detail says recovered_by, and its state description and handoff explanation say by which replay', async () => {
    const a = await get(A);
    expect(a.state).toBe('no_workflow');
    expect(a.recovered_by).toBe(A1);
    expect(a.recovered_at).toBe((await get(A1)).delivered_at);
    expect(a.state_description).toContain(`recovered by replay ${A1} delivered at ${a.recovered_at}`);
    expect(a.handoff.explanation).toContain(`recovered by replay ${A1}`);
    // Any depth: the original and the replay in between are both recovered by the replay that reached Flow.
    expect((await get(C)).recovered_by).toBe(C2);
    expect((await get(C1)).recovered_by).toBe(C2);
    // Not recovered: never replayed, delivered itself, the recovering replay.
    for (const id of [B, D, A1, C2]) expect((await get(id)).recovered_by, id).toBeNull();
  });

  it('attempt_count and the timeline agree on what called Flow: the no_workflow attempt says it did not, the replay that reached Flow says it did', async () => {
    const a = await get(A);
    const attempts = a.timeline.filter((t: any) => t.kind === 'attempt');
    expect(attempts.length).toBe(a.attempt_count);
    const [decided] = attempts;
    expect(decided.attempt.called_flow).toBe(false);
    expect(decided.attempt.local_check).toMatch(/Shopify was not called/);
    // No call, so no answer from Flow: the local check is not passed off as one.
    expect(decided.attempt.flow_response).toBeNull();
    expect(decided.summary).toMatch(/without calling Flow/);
    const delivered = (await get(A1)).timeline.filter((t: any) => t.kind === 'attempt');
    expect(delivered.map((t: any) => [t.attempt.outcome, t.attempt.called_flow, t.attempt.local_check])).toEqual([
      ['delivered', true, null],
    ]);
    expect(delivered[0].summary).not.toMatch(/without calling Flow/);
  });

  it('list items carry recovered_by and replayed_by, and `recovered` filters them', async () => {
    const all = await list('');
    const a = all.find((e) => e.id === A);
    expect(a.recovered_by).toBe(A1);
    expect(a.replayed_by.map((r: { id: string }) => r.id)).toEqual([A1]);
    expect(all.find((e) => e.id === B).replayed_by).toEqual([]);
    expect((await get(A)).replayed_by).toEqual(a.replayed_by);
    const yes = (await list('recovered=true')).map((e) => e.id).sort();
    expect(yes).toEqual([A, C, C1].sort());
    const no = (await list('recovered=false')).map((e) => e.id);
    for (const id of [B, D, A1, C2, dup]) expect(no).toContain(id);
    for (const id of [A, C, C1]) expect(no).not.toContain(id);
    const bad = await api(server, token, 'GET', '/agent/v1/events?recovered=maybe');
    expect(bad.status).toBe(400);
  });

  it('a recovered event cannot be replayed without acknowledge_recovered, and the read says so', async () => {
    const a = await get(A);
    expect(a.replay.available).toBe(false);
    expect(a.replay.reason).toBe('already_recovered');
    expect(a.replay.detail).toContain(A1);
    expect(a.replay.acknowledgements).toContain('acknowledge_recovered');
    const refused = await api(server, token, 'POST', `/agent/v1/events/${A}/replay-intents`, {});
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.code).toBe('event_already_recovered');
    expect(refused.json.docs_url).toMatch(/\/reference\/errors\/event_already_recovered\/$/);
    expect(refused.json.recovered_by).toBe(A1);
    const acknowledged = await api(server, token, 'POST', `/agent/v1/events/${A}/replay-intents`, {
      acknowledge_recovered: true,
      acknowledge_recent_delivery: true,
    });
    expect(acknowledged.status, acknowledged.text).toBe(201);
    await api(server, token, 'POST', `/agent/v1/action-intents/${acknowledged.json.id}/cancel`);
    // The replay_available filter agrees with the read.
    const available = (await list('replay_available=true')).map((e) => e.id);
    expect(available).not.toContain(A);
    expect(available).toContain(B);
    expect((await list('replay_available=false')).map((e) => e.id)).toContain(A);
  });

  it('recent_delivery says which event was delivered', async () => {
    const d = await get(D);
    expect(d.replay.reason).toBe('recent_delivery');
    expect(d.replay.detail).toContain(`This event (${D}) was delivered`);
    const a1 = await get(A1);
    expect(a1.replay.reason).toBe('recent_delivery');
    expect(a1.replay.detail).toContain(`This event (${A1}, a replay of ${A}) was delivered`);
    expect(a1.replay.detail).not.toMatch(/this sender event was delivered/i);
  });

  it('a bulk replay preview leaves recovered events out and says how many; acknowledge_recovered brings them back', async () => {
    const preview = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', { state: 'no_workflow' });
    expect(preview.status, preview.text).toBe(201);
    const details = preview.json.preview.details;
    expect(details.excluded.recovered).toBe(3);
    expect(details.count).toBe(1);
    expect(details.sample_event_ids).toEqual([B]);
    expect(preview.json.preview.warnings.join(' ')).toMatch(/3 .*recovered/);
    await api(server, token, 'POST', `/agent/v1/action-intents/${preview.json.id}/cancel`);
    const all = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', {
      state: 'no_workflow',
      acknowledge_recovered: true,
    });
    expect(all.status, all.text).toBe(201);
    expect(all.json.preview.details.excluded.recovered).toBe(0);
    expect(all.json.preview.details.sample_event_ids).toEqual(expect.arrayContaining([A, B, C, C1]));
    await api(server, token, 'POST', `/agent/v1/action-intents/${all.json.id}/cancel`);
  });

  it('recovery options: no deploy step while Flow says the workflow is enabled; replay first only when it is the right move', async () => {
    const actions = (ev: any) => (ev.recovery_options as { action: string }[]).map((o) => o.action);
    const b = await get(B);
    expect(actions(b)).not.toContain('deploy_trigger_and_workflow');
    expect(actions(b)[0]).toBe('replay');
    const a = await get(A);
    expect(actions(a)).not.toContain('deploy_trigger_and_workflow');
    expect(actions(a)[0]).toBe('inspect_recovery');
    expect(a.recovery_options[0].description).toContain(A1);
    expect(a.recovery_options[0].operation).toBe('getEvent');
    const d = await get(D);
    expect(actions(d)[0]).toBe('verify_in_flow');
    const replayOption = d.recovery_options.find((o: { action: string }) => o.action === 'replay');
    expect(replayOption.description).toMatch(/runs the workflow again/);
  });

  it("setup's recent_deliveries agrees with flow_workflow_enabled, counts the duplicate a success and names B", async () => {
    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    expect(setup.status, setup.text).toBe(200);
    const check = (name: string) => setup.json.checks.find((c: { check: string }) => c.check === name);
    expect(check(`flow_workflow_enabled:${handle}`).status).toBe('pass');
    const recent = check('recent_deliveries');
    expect(recent.detail).not.toMatch(/reached Flow/);
    expect(recent.detail).not.toMatch(/Deploy the trigger/);
    expect(recent.detail).toMatch(/without a call to Shopify/);
    expect(recent.detail).toMatch(/2 recovered by a replay/);
    expect(recent.detail).toMatch(/1 suppressed duplicate/);
    expect(recent.status).toBe('warn');
  });

  it('once B is recovered too, recent_deliveries passes and setup is ready', async () => {
    const B1 = await replay(B);
    await waitDelivered(server, B1);
    expect((await get(B)).recovered_by).toBe(B1);
    const setup = await api(server, token, 'GET', '/agent/v1/setup');
    const recent = setup.json.checks.find((c: { check: string }) => c.check === 'recent_deliveries');
    expect(recent.status, recent.detail).toBe('pass');
    expect(recent.detail).toMatch(/3 recovered by a replay/);
    expect(recent.detail).not.toMatch(/of \d+ event\(s\) delivered/);
    expect(recent.detail).not.toMatch(/still on the way/);
    expect(setup.json.ready).toBe(true);
  });

  it('a bulk replay over a window where everything is recovered says nothing is left, and names acknowledge_recovered', async () => {
    const again = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', { state: 'no_workflow' });
    expect(again.status, again.text).toBe(409);
    expect(again.json.code).toBe('bulk_replay_no_events');
    expect(again.json.detail).toMatch(/Nothing is left to replay/);
    const fields = (again.json.refusal.next_steps as { field?: string }[]).map((s) => s.field).filter(Boolean);
    expect(fields).toContain('acknowledge_recovered');
  });

  it('plan usage says how the event count adds up: accepted events plus suppressed duplicates', async () => {
    const usage = await api(server, token, 'GET', '/agent/v1/plan-usage');
    expect(usage.status, usage.text).toBe(200);
    const counts = usage.json.events;
    const n = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM events WHERE shop_id = ?',
      [server.sandbox?.shop_id as string],
    );
    expect(counts.total).toBe(Number(n?.n));
    expect(counts.duplicates_suppressed).toBeGreaterThanOrEqual(1);
    expect(counts.accepted + counts.duplicates_suppressed + counts.replays + counts.test_events).toBe(counts.total);
    const meter = usage.json.meters.find((m: { meter: string }) => m.meter === 'accepted_events');
    expect(meter.used).toBe(counts.accepted);
    expect(counts.description).toMatch(/duplicate/);
  });
});

describe('migration 1700 backfill', () => {
  it('settles existing families with the same statement, over the same terminal states', async () => {
    expect(BACKFILL_TERMINAL_STATES).toEqual([...STORED_TERMINAL_STATES]);
    const { db } = server.runtime.services;
    // Families as they were before the column existed.
    await db.run('UPDATE events SET recovered_by = NULL WHERE shop_id = ?', [server.sandbox?.shop_id as string]);
    expect((await get(A)).recovered_by).toBeNull();
    await db.tx((tx) => backfillRecoveredBy(tx));
    expect((await get(A)).recovered_by).toBe(A1);
    expect((await get(C)).recovered_by).toBe(C2);
    expect((await get(C1)).recovered_by).toBe(C2);
    for (const id of [D, A1, C2, dup]) expect((await get(id)).recovered_by, id).toBeNull();
  });
});

describe('a bulk replay run', () => {
  it('skips an event recovered after its confirmation (event_already_recovered), replays the rest', async () => {
    // One replay a second: the second event's turn comes a second after the first's.
    const s = await startTestServer({ env: { FLOWPORT_BULK_REPLAY_RATE: '1' } });
    try {
      const sb = s.sandbox!;
      const [e1, e2] = (await failedEvents(s.runtime.services, sb.shop_id, sb.endpoint_id, 2, {
        errorCode: 'run_skips_recovered',
      })) as [string, string];
      const preview = await api(s, sb.grant_token, 'POST', '/agent/v1/bulk-replay-intents', {
        error_code: 'run_skips_recovered',
      });
      expect(preview.status, preview.text).toBe(201);
      expect(preview.json.preview.details.count).toBe(2);
      const done = await confirm(s, sb.grant_token, preview.json.id);
      expect(done.status, done.text).toBe(200);
      // Meanwhile another replay of e2's sender event reached Flow (written as the outcome recorder would).
      await s.runtime.services.db.run('UPDATE events SET recovered_by = ? WHERE id = ?', [e1, e2]);
      const items = await waitFor(async () => {
        const r = await api(s, sb.grant_token, 'GET', `/agent/v1/action-intents/${preview.json.id}/items`);
        return r.json.data.every((i: { status: string }) => i.status !== 'pending') ? r.json.data : undefined;
      });
      expect(items.map((i: { event_id: string; status: string }) => [i.event_id, i.status])).toEqual([
        [e1, 'replayed'],
        [e2, 'refused'],
      ]);
      expect(items[1].reason).toBe('event_already_recovered');
    } finally {
      await s.close();
    }
  });
});

describe('the no_workflow window of a bulk replay', () => {
  it('ends when Flow said the workflow is enabled again (null while still off); no_workflow_until ends it by hand', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    // The story above turned the workflow on again (Flow's lifecycle callback dated `clock`).
    const on = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', {
      no_workflow_since: since,
      acknowledge_recovered: true,
    });
    expect(on.status, on.text).toBe(201);
    expect(on.json.preview.details.no_workflow_window).toEqual({
      since,
      until: new Date(clock).toISOString(),
      until_source: 'flow_lifecycle',
    });
    await api(server, token, 'POST', `/agent/v1/action-intents/${on.json.id}/cancel`);
    // Ended by hand before any event: nothing matches.
    const early = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', {
      no_workflow_since: since,
      no_workflow_until: new Date(Date.now() - 3_000_000).toISOString(),
      acknowledge_recovered: true,
    });
    expect(early.status, early.text).toBe(409);
    expect(early.json.matched).toBe(0);
    // Turned off again: the window is open.
    await workflow(false);
    const off = await api(server, token, 'POST', '/agent/v1/bulk-replay-intents', {
      no_workflow_since: since,
      acknowledge_recovered: true,
    });
    expect(off.status, off.text).toBe(201);
    expect(off.json.preview.details.no_workflow_window).toEqual({ since, until: null, until_source: null });
    await api(server, token, 'POST', `/agent/v1/action-intents/${off.json.id}/cancel`);
    await workflow(true);
  });
});
