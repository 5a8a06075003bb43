// Bulk replay through real HTTP on both stores: the preview (count, meter cost, sample, refusals
// by reason, estimated duration), confirmation running in the background and finishing with
// per-event results, cancellation mid-run, a run that survives `kill -9` of the process running
// it without replaying any event twice, and 1,000 failed events replayed while the Shopify
// stand-in throttles, every one accounted for.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { newId } from '../../api/src/ids.ts';
import type { Services } from '../../api/src/core/types.ts';
import { setFault } from '../../api/src/sandbox/app.ts';
import { DEFAULT_HMAC, insertEndpoint, PLAIN_MAPPING } from '../../api/src/services/endpoints.ts';
import { flowport } from '../cli/helpers.ts';
import { waitFor, workerSettings } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, failedEvents, spawnBulkReplayWorker } from './helpers.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 60_000 });

const servers: TestServer[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function server(env: Record<string, string> = {}, worker = true): Promise<TestServer> {
  const s = await startTestServer({
    env,
    worker,
    configure: workerSettings({ retryBaseMs: 20, retryCapMs: 200, maxAttempts: 50 }),
  });
  servers.push(s);
  // Room for a thousand replays (and the reads of this test) on the plan.
  await s.runtime.services.db.run(`UPDATE shops SET plan = 'scale' WHERE id = ?`, [s.sandbox?.shop_id as string]);
  return s;
}

async function recoveryToken(s: TestServer): Promise<string> {
  const g = await createGrant(s.runtime.services, {
    shopId: s.sandbox?.shop_id as string,
    tier: 'recovery_operator',
    actorKind: 'agent',
    actorName: 'bulk-replay-agent',
    expiresInMs: 3_600_000,
  });
  return g.token;
}

async function intentRow(services: Services, id: string) {
  return services.db.get<{ state: string }>('SELECT state FROM action_intents WHERE id = ?', [id]);
}

async function itemCounts(services: Services, intentId: string): Promise<Record<string, number>> {
  const rows = await services.db.all<{ status: string; n: number | string }>(
    'SELECT status, COUNT(*) AS n FROM bulk_replay_items WHERE intent_id = ? GROUP BY status',
    [intentId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** How many replay events each item's event has (must be exactly its item's one, or none). */
async function replaysPerEvent(services: Services, intentId: string) {
  return services.db.all<{ event_id: string; status: string; n: number | string }>(
    `SELECT i.event_id, i.status, COUNT(e.id) AS n FROM bulk_replay_items i
       LEFT JOIN events e ON e.replay_of = i.event_id
      WHERE i.intent_id = ? GROUP BY i.event_id, i.status`,
    [intentId],
  );
}

describe('bulk replay', () => {
  it('previews count, cost, sample, refusals and duration; runs in the background; records per-event results', async () => {
    const s = await server();
    const services = s.runtime.services;
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const token = await recoveryToken(s);
    const eligible = await failedEvents(services, sb.shop_id, sb.endpoint_id, 5, { errorCode: 'flow_unavailable' });
    const [expired, recent] = await failedEvents(services, sb.shop_id, sb.endpoint_id, 2, {
      errorCode: 'flow_unavailable',
    });
    await services.db.run(`UPDATE events SET body = NULL, retention_state = 'expired' WHERE id = ?`, [
      expired as string,
    ]);
    await services.db.run('UPDATE events SET delivered_at = ? WHERE id = ?', [
      services.now() - 60_000,
      recent as string,
    ]);
    const gone = await insertEndpoint(
      services,
      sb.shop_id,
      {
        name: 'gone',
        senderLabel: 'gone',
        triggerVariant: 'generic',
        authMode: 'hmac_sha256',
        hmac: DEFAULT_HMAC,
        mapping: PLAIN_MAPPING,
      } as never,
      'gone-secret-0123456789abcdef0123456789',
    );
    const [onGone] = await failedEvents(services, sb.shop_id, gone.id, 1, { errorCode: 'flow_unavailable' });
    await services.db.run('UPDATE endpoints SET deleted_at = ? WHERE id = ?', [services.now(), gone.id]);
    // Another error code: outside the filter.
    await failedEvents(services, sb.shop_id, sb.endpoint_id, 1, { errorCode: 'other_code' });

    const preview = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', {
      state: 'failed',
      error_code: 'flow_unavailable',
    });
    expect(preview.status, preview.text).toBe(201);
    const intent = preview.json;
    expect(intent.kind).toBe('bulk_replay');
    expect(intent.state).toBe('previewed');
    const d = intent.preview.details;
    expect(d.matched).toBe(8);
    expect(d.count).toBe(5);
    expect(d.sample_event_ids).toEqual(eligible);
    expect(d.refused.by_reason).toEqual({ retention_expired: 1, recent_delivery: 1, endpoint_deleted: 1 });
    expect(d.refused.sample.map((r: { event_id: string }) => r.event_id).sort()).toEqual(
      [expired, recent, onGone].sort(),
    );
    expect(d.meter.replays.cost).toBe(5);
    expect(d.meter.fits).toBe(true);
    expect(d.estimate.rate_per_second).toBeGreaterThan(0);
    expect(d.estimate.seconds).toBe(Math.ceil(5 / d.estimate.rate_per_second));
    expect(intent.required_scope).toBe('bulk_replay:execute');

    const usedBefore = (await api(s, token, 'GET', '/agent/v1/plan-usage')).json;
    const key = randomUUID();
    const confirmed = await confirm(s, token, intent.id, key);
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(['confirmed', 'executed']).toContain(confirmed.json.state);
    expect(confirmed.json.progress.total).toBe(5);
    // Idempotent: the same key answers the same; the intent runs once.
    const again = await confirm(s, token, intent.id, key);
    expect(again.json.id).toBe(intent.id);
    expect((await confirm(s, token, intent.id)).json.code).toBe('intent_not_confirmable');

    await waitFor(async () => ((await intentRow(services, intent.id))?.state === 'executed' ? true : null), 'executed');
    const done = await api(s, token, 'GET', `/agent/v1/action-intents/${intent.id}`);
    expect(done.json.state).toBe('executed');
    expect(done.json.progress).toMatchObject({ total: 5, replayed: 5, pending: 0, refused: 0 });
    expect(done.json.result).toMatchObject({ total: 5, replayed: 5 });
    const items = await api(s, token, 'GET', `/agent/v1/action-intents/${intent.id}/items`);
    expect(items.status).toBe(200);
    expect(items.json.data.map((i: { event_id: string }) => i.event_id)).toEqual(eligible);
    for (const item of items.json.data) {
      expect(item.status).toBe('replayed');
      expect(item.replay_event_id).toMatch(/^evt_/);
    }
    // The replays are delivered like any event.
    await waitFor(async () => {
      const n = await services.db.get<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM events WHERE state = 'delivered' AND replay_of IN (${eligible.map(() => '?').join(', ')})`,
        eligible,
      );
      return Number(n?.n) === 5 ? true : null;
    }, 'replays delivered');
    // `executed` said the replays were made; the intent now counts them by their state, and its
    // next step says executed is not yet delivered.
    const counted = await api(s, token, 'GET', `/agent/v1/action-intents/${intent.id}`);
    expect(counted.json.progress.replays_by_state).toEqual({ delivered: 5 });
    expect(counted.json.next_step).toMatch(/replays_by_state/);
    expect(counted.json.links.confirm).toBe(`/agent/v1/action-intents/${intent.id}/confirm`);
    // The items say so too, each as its replay's own read says it: one page shows the run reached Flow.
    const after = await api(s, token, 'GET', `/agent/v1/action-intents/${intent.id}/items`);
    for (const item of after.json.data) {
      const replay = (await api(s, token, 'GET', `/agent/v1/events/${item.replay_event_id}`)).json;
      expect([item.replay_state, item.replay_delivered_at]).toEqual(['delivered', replay.delivered_at]);
      expect(replay.delivered_at).toEqual(expect.any(String));
    }
    // Metered per event: 5 replays.
    const usedAfter = (await api(s, token, 'GET', '/agent/v1/plan-usage')).json;
    const replays = (u: { meters: { meter: string; used: number }[] }) =>
      u.meters?.find((m) => m.meter === 'replays')?.used ?? Number.NaN;
    expect(replays(usedAfter) - replays(usedBefore)).toBe(5);
    // Audited as one intent: preview, confirm, execute.
    const audit = await services.db.all<{ action: string; outcome: string }>(
      'SELECT action, outcome FROM audit_log WHERE target_id = ? ORDER BY seq',
      [intent.id],
    );
    // (The third confirmation above was refused, and audited as such.)
    expect(audit.filter((a) => a.outcome === 'refused').map((a) => a.action)).toContain('bulk_replay.confirm');
    expect(
      audit.filter((a) => a.outcome === 'success' && a.action.startsWith('bulk_replay.')).map((a) => a.action),
    ).toEqual(['bulk_replay.preview', 'bulk_replay.confirm', 'bulk_replay.execute']);

    // Nothing left to replay: the same filter now refuses with the breakdown.
    const empty = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', {
      state: 'failed',
      error_code: 'flow_unavailable',
    });
    expect(empty.status).toBe(409);
    expect(empty.json.code).toBe('bulk_replay_no_events');
    // Each was replayed, and its replay reached Flow: recovered, left out before any refusal (ADR 0420).
    expect(empty.json.excluded.recovered).toBe(5);
    expect(empty.json.refused.already_replayed).toBeUndefined();
  });

  it('a grant without bulk_replay scopes cannot preview it; other shops never see its items', async () => {
    const s = await server();
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const observer = await createGrant(s.runtime.services, {
      shopId: sb.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'observer',
      expiresInMs: 3_600_000,
    });
    const refused = await api(s, observer.token, 'POST', '/agent/v1/bulk-replay-intents', { state: 'failed' });
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('missing_scope');
    const missing = await api(s, observer.token, 'GET', `/agent/v1/action-intents/${newId('intent')}/items`);
    expect(missing.status).toBe(404);
    const bad = await api(s, await recoveryToken(s), 'POST', '/agent/v1/bulk-replay-intents', {
      state: 'failed',
      unknown_field: 1,
    });
    expect(bad.status).toBe(400);
  });

  it('cancelling a running bulk replay stops it: no replay after the cancel', async () => {
    const s = await server({ FLOWPORT_BULK_REPLAY_RATE: '5' });
    const services = s.runtime.services;
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const token = await recoveryToken(s);
    await failedEvents(services, sb.shop_id, sb.endpoint_id, 40);
    const preview = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', {});
    expect(preview.status, preview.text).toBe(201);
    const id = preview.json.id;
    expect((await confirm(s, token, id)).status).toBe(200);
    await waitFor(async () => ((await itemCounts(services, id)).replayed ?? 0) >= 2 || null, 'some replayed');
    const cancelled = await api(s, token, 'POST', `/agent/v1/action-intents/${id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json.state).toBe('cancelled');
    expect(cancelled.json.progress.pending).toBe(0);
    expect(cancelled.json.progress.cancelled).toBeGreaterThan(0);
    const atCancel = cancelled.json.progress.replayed as number;
    // The runner notices and stops; the store agrees with the answer, and every cancelled item has no replay.
    await s.runtime.bulkReplays?.stop();
    const counts = await itemCounts(services, id);
    expect(counts.replayed).toBe(atCancel);
    for (const r of await replaysPerEvent(services, id)) expect(Number(r.n)).toBe(r.status === 'replayed' ? 1 : 0);
    expect((await api(s, token, 'POST', `/agent/v1/action-intents/${id}/cancel`)).json.code).toBe(
      'intent_not_confirmable',
    );
  });

  it('the CLI follows a run with a progress bar on a terminal, and prints the final intent as JSON otherwise', async () => {
    const s = await server({ FLOWPORT_BULK_REPLAY_RATE: '20' });
    const services = s.runtime.services;
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const token = await recoveryToken(s);
    await failedEvents(services, sb.shop_id, sb.endpoint_id, 30);
    const env = { FLOWPORT_BASE_URL: s.url, FLOWPORT_TOKEN: token };
    const previewed = await flowport(['preview-bulk-replay', '--state', 'failed', '--json'], { env });
    expect(previewed.code, previewed.stderr).toBe(0);
    const id = previewed.json.id as string;
    expect(previewed.json.preview.details.count).toBe(30);
    expect((await confirm(s, token, id)).status).toBe(200);
    const watched = await flowport(['watch-action-intent', id, '--interval-ms', '500'], { env, tty: true });
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/\[#{30}\] 100% 30\/30 \(replayed 30, refused 0\)/);
    expect(watched.stdout).toContain(`bulk_replay ${id}: executed`);
    const json = await flowport(['watch-action-intent', id], { env });
    expect(json.code).toBe(0);
    expect(json.json).toMatchObject({ id, state: 'executed', progress: { total: 30, replayed: 30 } });
    expect(json.stdout).not.toContain(token);
  });

  it('survives kill -9 of the process running it and never replays an event twice', async () => {
    // The API process runs no worker; `flowport worker` children run the bulk replay.
    const s = await server({}, false);
    const services = s.runtime.services;
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const token = await recoveryToken(s);
    const N = 60;
    await failedEvents(services, sb.shop_id, sb.endpoint_id, N);
    const preview = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', {});
    expect(preview.status, preview.text).toBe(201);
    const id = preview.json.id;
    expect((await confirm(s, token, id)).status).toBe(200);
    const worker = () => spawnBulkReplayWorker(s, children);
    const first = worker();
    await waitFor(
      async () => ((await itemCounts(services, id)).replayed ?? 0) >= 10 || null,
      'first worker replays',
      120_000,
    );
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const atKill = (await itemCounts(services, id)).replayed ?? 0;
    expect(atKill).toBeLessThan(N);
    worker();
    await waitFor(
      async () => ((await intentRow(services, id))?.state === 'executed' ? true : null),
      'executed',
      120_000,
    );
    const counts = await itemCounts(services, id);
    expect(counts).toEqual({ replayed: N });
    const per = await replaysPerEvent(services, id);
    expect(per).toHaveLength(N);
    for (const r of per) expect(Number(r.n), r.event_id).toBe(1);
  });

  it('1,000 failed events replayed while the Shopify stand-in throttles: every event accounted for', async () => {
    const s = await server({ FLOWPORT_BULK_REPLAY_RATE: '500' });
    const services = s.runtime.services;
    const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
    const token = await recoveryToken(s);
    const N = 1000;
    const ids = await failedEvents(services, sb.shop_id, sb.endpoint_id, N);
    setFault(s.runtime.sandbox as NonNullable<TestServer['runtime']['sandbox']>, sb.shop_domain, {
      mode: 'throttled_429',
      rate: 0.2,
      count: 60,
      retry_after_s: 1,
    });
    const preview = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', { state: 'failed' });
    expect(preview.status, preview.text).toBe(201);
    expect(preview.json.preview.details.count).toBe(N);
    expect(preview.json.preview.details.estimate.seconds).toBe(10);
    const id = preview.json.id;
    expect((await confirm(s, token, id)).status).toBe(200);
    await waitFor(
      async () => ((await intentRow(services, id))?.state === 'executed' ? true : null),
      'executed',
      180_000,
    );
    expect(await itemCounts(services, id)).toEqual({ replayed: N });
    // Every replay reaches Flow (retries absorb the throttling), one per original.
    await waitFor(
      async () => {
        const r = await services.db.get<{ n: number | string }>(
          `SELECT COUNT(*) AS n FROM events WHERE state = 'delivered' AND replay_of IS NOT NULL AND shop_id = ?`,
          [sb.shop_id],
        );
        return Number(r?.n) === N ? true : null;
      },
      'every replay delivered',
      180_000,
    );
    const per = await replaysPerEvent(services, id);
    expect(new Set(per.map((r) => r.event_id))).toEqual(new Set(ids));
    for (const r of per) expect(Number(r.n)).toBe(1);
    const throttled = await services.db.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM attempts WHERE outcome = 'throttled' AND shop_id = ?`,
      [sb.shop_id],
    );
    expect(Number(throttled?.n)).toBeGreaterThan(0);
  });
});
