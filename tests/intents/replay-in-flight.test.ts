// Issue 40, defect 1: an event has at most one replay in flight, whoever asks. Two bulk replays
// of the same events confirmed together, a single replay confirmed while a bulk run still has
// the event pending, single replays confirmed at once from several grants, confirmations from
// several processes (PostgreSQL), and a bulk run whose process is killed with SIGKILL: every
// event ends with exactly one replay, checked in the store, and the loser gets `replay_in_flight`
// (a single replay's refusal, or a bulk replay's item refused with that reason). On both stores.
//
// Most tests run the API without a worker and start a bulk replay runner themselves once the
// confirmations are in: no replay is made (or delivered) between them, so the outcome of each
// confirmation is the same on every run.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import type { Services } from '../../api/src/core/types.ts';
import { BulkReplayRunner } from '../../api/src/intents/bulk-replay-runner.ts';
import { migrate } from '../../api/src/store/migrate.ts';
import { waitFor, workerSettings } from '../handoff/helpers.ts';
import { collectOutput, PROJECT_NODE, REPO_ROOT } from '../helpers/process.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { testStore } from '../helpers/store.ts';
import { api, confirm, failedEvents, spawnBulkReplayWorker } from './helpers.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 60_000 });

const servers: TestServer[] = [];
const children: ChildProcess[] = [];
const runners: BulkReplayRunner[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const r of runners.splice(0)) await r.stop();
});
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function server(env: Record<string, string> = {}, worker = false): Promise<TestServer> {
  const s = await startTestServer({
    env,
    worker,
    configure: workerSettings({ retryBaseMs: 20, retryCapMs: 200, maxAttempts: 50 }),
  });
  servers.push(s);
  await s.runtime.services.db.run(`UPDATE shops SET plan = 'scale' WHERE id = ?`, [s.sandbox?.shop_id as string]);
  return s;
}

const sandboxOf = (s: TestServer) => s.sandbox as NonNullable<TestServer['sandbox']>;

async function recoveryToken(s: TestServer, name: string): Promise<string> {
  const g = await createGrant(s.runtime.services, {
    shopId: sandboxOf(s).shop_id,
    tier: 'recovery_operator',
    actorKind: 'agent',
    actorName: name,
    expiresInMs: 3_600_000,
  });
  return g.token;
}

/** A bulk replay runner of this test's own (the API process runs none). */
function runner(s: TestServer): BulkReplayRunner {
  const r = new BulkReplayRunner(s.runtime.services);
  runners.push(r);
  r.start();
  return r;
}

async function intentState(services: Services, id: string) {
  return (
    await services.db.get<{ state: string; error_code: string | null }>(
      'SELECT state, error_code FROM action_intents WHERE id = ?',
      [id],
    )
  )?.state;
}

function executed(services: Services, ids: string[], timeoutMs = 120_000) {
  return waitFor(
    async () => (await Promise.all(ids.map((id) => intentState(services, id)))).every((s) => s === 'executed') || null,
    'bulk replays executed',
    timeoutMs,
  );
}

/** How many replay events each event has, read from the store (0 for none). */
async function replaysOf(services: Services, ids: string[]): Promise<Record<string, number>> {
  const rows = await services.db.all<{ replay_of: string; n: number | string }>(
    `SELECT replay_of, COUNT(*) AS n FROM events WHERE replay_of IN (${ids.map(() => '?').join(', ')}) GROUP BY replay_of`,
    ids,
  );
  const out = Object.fromEntries(ids.map((id) => [id, 0]));
  for (const r of rows) out[r.replay_of] = Number(r.n);
  return out;
}

const once = (ids: string[]) => Object.fromEntries(ids.map((id) => [id, 1]));

/** Every bulk item of these intents, by event. */
async function itemsOf(services: Services, intentIds: string[]) {
  return services.db.all<{
    intent_id: string;
    event_id: string;
    status: string;
    reason: string | null;
    replay_event_id: string | null;
  }>(
    `SELECT intent_id, event_id, status, reason, replay_event_id FROM bulk_replay_items
      WHERE intent_id IN (${intentIds.map(() => '?').join(', ')}) ORDER BY event_id, intent_id`,
    intentIds,
  );
}

/**
 * The claims agree with the replays: each event's claim names its one replay, made by the intent
 * the claim names, and no claim is left without a replay once nothing is pending.
 */
async function claimsConsistent(services: Services, ids: string[]) {
  const rows = await services.db.all<{
    event_id: string;
    intent_id: string;
    replay_event_id: string | null;
    replay_of: string | null;
  }>(
    `SELECT c.event_id, c.intent_id, c.replay_event_id, e.replay_of FROM replay_claims c
       LEFT JOIN events e ON e.id = c.replay_event_id
      WHERE c.event_id IN (${ids.map(() => '?').join(', ')}) ORDER BY c.event_id`,
    ids,
  );
  expect(rows.map((r) => r.event_id)).toEqual([...ids].sort());
  for (const r of rows) expect(r.replay_of, r.event_id).toBe(r.event_id);
  return rows;
}

describe('an event has at most one replay in flight', () => {
  it('two bulk replays of the same events confirmed together: each event replayed once, the other skips it', async () => {
    const s = await server();
    const services = s.runtime.services;
    const sb = sandboxOf(s);
    const ids = await failedEvents(services, sb.shop_id, sb.endpoint_id, 20);
    const [a, b] = [await recoveryToken(s, 'agent-a'), await recoveryToken(s, 'agent-b')];
    const pa = await api(s, a, 'POST', '/agent/v1/bulk-replay-intents', {});
    const pb = await api(s, b, 'POST', '/agent/v1/bulk-replay-intents', {});
    expect([pa.status, pb.status], pa.text + pb.text).toEqual([201, 201]);
    expect([pa.json.preview.details.count, pb.json.preview.details.count]).toEqual([20, 20]);
    const [ca, cb] = await Promise.all([confirm(s, a, pa.json.id), confirm(s, b, pb.json.id)]);
    expect([ca.status, cb.status], ca.text + cb.text).toEqual([200, 200]);
    runner(s);
    await executed(services, [pa.json.id, pb.json.id]);
    // Checked in the store: one replay per event, whichever run made it.
    expect(await replaysOf(services, ids)).toEqual(once(ids));
    // Every event is replayed by one run and refused by the other, with the reason.
    const items = await itemsOf(services, [pa.json.id, pb.json.id]);
    expect(items).toHaveLength(40);
    for (const id of ids) {
      const mine = items.filter((i) => i.event_id === id);
      expect(mine.map((i) => i.status).sort(), id).toEqual(['refused', 'replayed']);
      expect(mine.find((i) => i.status === 'refused')?.reason).toBe('replay_in_flight');
    }
    // The runs' results and item listings say so.
    let skipped = 0;
    for (const [token, id] of [
      [a, pa.json.id],
      [b, pb.json.id],
    ] as const) {
      const read = await api(s, token, 'GET', `/agent/v1/action-intents/${id}`);
      expect(read.json.state).toBe('executed');
      expect(read.json.progress.replayed + read.json.progress.refused).toBe(20);
      skipped += read.json.result.refused_by_reason.replay_in_flight ?? 0;
      const listed = await api(s, token, 'GET', `/agent/v1/action-intents/${id}/items`);
      for (const item of listed.json.data) if (item.status === 'refused') expect(item.reason).toBe('replay_in_flight');
    }
    expect(skipped).toBe(20);
    await claimsConsistent(services, ids);
  });

  it('a single replay confirmed while a bulk run has the event pending is refused; and the other way round', async () => {
    const s = await server();
    const services = s.runtime.services;
    const sb = sandboxOf(s);
    const ids = await failedEvents(services, sb.shop_id, sb.endpoint_id, 5, { errorCode: 'first_batch' });
    const target = ids[4] as string;
    const [a, b] = [await recoveryToken(s, 'single'), await recoveryToken(s, 'bulk')];
    const single = await api(s, a, 'POST', `/agent/v1/events/${target}/replay-intents`, {});
    expect(single.status, single.text).toBe(201);
    const bulk = await api(s, b, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'first_batch' });
    expect(bulk.status, bulk.text).toBe(201);
    expect((await confirm(s, b, bulk.json.id)).status).toBe(200);
    // The bulk run has not started: every item is pending. The single replay loses.
    const refused = await confirm(s, a, single.json.id);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.json.code).toBe('replay_in_flight');
    expect(refused.json.detail).toContain(bulk.json.id);
    expect(refused.json.type).toMatch(/replay_in_flight\/?$/);
    const row = await services.db.get<{ state: string; error_code: string }>(
      'SELECT state, error_code FROM action_intents WHERE id = ?',
      [single.json.id],
    );
    expect(row).toEqual({ state: 'refused', error_code: 'replay_in_flight' });
    // A preview says so at once, and a bulk preview counts the events as in flight.
    const early = await api(s, a, 'POST', `/agent/v1/events/${target}/replay-intents`, {});
    expect(early.status).toBe(409);
    expect(early.json.code).toBe('replay_in_flight');
    const again = await api(s, b, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'first_batch' });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('bulk_replay_no_events');
    expect(again.json.refused.replay_in_flight).toBe(5);

    // The other way round: the single replay confirmed first, the bulk run skips its event.
    const more = await failedEvents(services, sb.shop_id, sb.endpoint_id, 3, { errorCode: 'second_batch' });
    const bulk2 = await api(s, b, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'second_batch' });
    expect(bulk2.status, bulk2.text).toBe(201);
    const single2 = await api(s, a, 'POST', `/agent/v1/events/${more[1]}/replay-intents`, {});
    expect((await confirm(s, a, single2.json.id)).status).toBe(200);
    const c2 = await confirm(s, b, bulk2.json.id);
    expect(c2.status, c2.text).toBe(200);
    expect(c2.json.progress).toMatchObject({ total: 3, refused: 1, refused_by_reason: { replay_in_flight: 1 } });

    runner(s);
    await executed(services, [bulk.json.id, bulk2.json.id]);
    expect(await replaysOf(services, [...ids, ...more])).toEqual(once([...ids, ...more]));
    const items = await itemsOf(services, [bulk2.json.id]);
    expect(items.find((i) => i.event_id === more[1])).toMatchObject({ status: 'refused', reason: 'replay_in_flight' });
    await claimsConsistent(services, [...ids, ...more]);
  });

  it('single replays of one event confirmed at once from several grants: one replay, the others refused', async () => {
    const s = await server();
    const services = s.runtime.services;
    const sb = sandboxOf(s);
    const [target] = (await failedEvents(services, sb.shop_id, sb.endpoint_id, 1)) as [string];
    const tokens = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => recoveryToken(s, `agent-${i}`)));
    const previews = await Promise.all(
      tokens.map((t) => api(s, t, 'POST', `/agent/v1/events/${target}/replay-intents`, {})),
    );
    for (const p of previews) expect(p.status, p.text).toBe(201);
    const results = await Promise.all(tokens.map((t, i) => confirm(s, t, previews[i]?.json.id)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status, r.text).toBe(409);
      expect(r.json.code).toBe('replay_in_flight');
    }
    expect(await replaysOf(services, [target])).toEqual({ [target]: 1 });
    await claimsConsistent(services, [target]);
  });

  it('a claim never blocks for good: a cancelled run releases it, a replay that ended lets the next one take it', async () => {
    // One replay a second: the runner cannot reach the last of 30 events before the cancel.
    const s = await server({ FLOWPORT_BULK_REPLAY_RATE: '1' }, true);
    const services = s.runtime.services;
    const sb = sandboxOf(s);
    const token = await recoveryToken(s, 'agent');
    const ids = await failedEvents(services, sb.shop_id, sb.endpoint_id, 30, { errorCode: 'cancel_me' });
    const last = ids[29] as string;
    const bulk = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'cancel_me' });
    expect((await confirm(s, token, bulk.json.id)).status).toBe(200);
    const cancelled = await api(s, token, 'POST', `/agent/v1/action-intents/${bulk.json.id}/cancel`);
    expect(cancelled.json.state).toBe('cancelled');
    const single = await api(s, token, 'POST', `/agent/v1/events/${last}/replay-intents`, {});
    expect(single.status, single.text).toBe(201);
    const first = await confirm(s, token, single.json.id);
    expect(first.status, first.text).toBe(200);
    // Its replay is delivered (terminal): the next replay of the same event may go.
    await waitFor(
      async () =>
        (
          await services.db.get<{ state: string }>('SELECT state FROM events WHERE id = ?', [
            first.json.result.event_id,
          ])
        )?.state === 'delivered' || null,
      'the replay delivered',
    );
    const next = await api(s, token, 'POST', `/agent/v1/events/${last}/replay-intents`, {
      acknowledge_recent_delivery: true,
      acknowledge_recovered: true,
    });
    expect(next.status, next.text).toBe(201);
    const second = await confirm(s, token, next.json.id);
    expect(second.status, second.text).toBe(200);
    expect(await replaysOf(services, [last])).toEqual({ [last]: 2 });
    const claim = await services.db.get<{ intent_id: string; replay_event_id: string }>(
      'SELECT intent_id, replay_event_id FROM replay_claims WHERE event_id = ?',
      [last],
    );
    expect(claim).toEqual({ intent_id: next.json.id, replay_event_id: second.json.result.event_id });
  });

  it('upgrading a store claims what is in flight: runs pending on the same events replay each once', async () => {
    const s = await server();
    const services = s.runtime.services;
    const sb = sandboxOf(s);
    const ids = await failedEvents(services, sb.shop_id, sb.endpoint_id, 6, { errorCode: 'upgrade' });
    const [other] = await failedEvents(services, sb.shop_id, sb.endpoint_id, 1, { errorCode: 'single' });
    const token = await recoveryToken(s, 'agent');
    const pa = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'upgrade' });
    const pb = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', { error_code: 'upgrade' });
    const single = await api(s, token, 'POST', `/agent/v1/events/${other}/replay-intents`, {});
    for (const p of [pa, pb, single]) expect((await confirm(s, token, p.json.id)).status).toBe(200);
    // The store as it was before migration 1600: both runs pending on the same events, no claims.
    await services.db.run(`UPDATE bulk_replay_items SET status = 'pending', reason = NULL, finished_at = NULL`);
    await services.db.run('DROP TABLE replay_claims');
    await services.db.run('DELETE FROM schema_migrations WHERE version = ?', ['1600_replay_claims.sql']);
    expect(await migrate(services.db)).toEqual(['1600_replay_claims.sql']);
    const claims = await services.db.all<{
      event_id: string;
      intent_id: string | null;
      replay_event_id: string | null;
    }>('SELECT event_id, intent_id, replay_event_id FROM replay_claims ORDER BY event_id');
    const singleReplay = (await replaysOf(services, [other as string]))[other as string];
    expect(singleReplay).toBe(1);
    expect(claims).toHaveLength(7);
    for (const c of claims.filter((x) => x.event_id !== other)) expect(c).toMatchObject({ intent_id: pa.json.id });
    expect(claims.find((c) => c.event_id === other)?.replay_event_id).toMatch(/^evt_/);
    // The replay made before the upgrade still holds its event.
    const again = await api(s, token, 'POST', `/agent/v1/events/${other}/replay-intents`, {});
    expect(again.json.code).toBe('replay_in_flight');
    // The run that does not hold an event's claim does not replay it.
    runner(s);
    await executed(services, [pa.json.id, pb.json.id]);
    expect(await replaysOf(services, ids)).toEqual(once(ids));
    const items = await itemsOf(services, [pb.json.id]);
    expect(items.map((i) => [i.status, i.reason])).toEqual(ids.map(() => ['refused', 'replay_in_flight']));
    await claimsConsistent(services, ids);
  });

  it('survives kill -9 of the process running a bulk replay: one replay per event, the claims agree', async () => {
    const s = await server();
    const services = s.runtime.services;
    const sb = sandboxOf(s);
    const token = await recoveryToken(s, 'agent');
    const N = 40;
    const ids = await failedEvents(services, sb.shop_id, sb.endpoint_id, N);
    const preview = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', {});
    const id = preview.json.id;
    expect((await confirm(s, token, id)).status).toBe(200);
    const worker = () => spawnBulkReplayWorker(s, children);
    const replayed = async () =>
      Number(
        (
          await services.db.get<{ n: number | string }>(
            `SELECT COUNT(*) AS n FROM bulk_replay_items WHERE intent_id = ? AND status = 'replayed'`,
            [id],
          )
        )?.n,
      );
    const first = worker();
    await waitFor(async () => (await replayed()) >= 10 || null, 'first worker replays', 120_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect(await replayed()).toBeLessThan(N);
    // While the run is stopped, its pending events stay claimed: a single replay is refused.
    const pending = await services.db.get<{ event_id: string }>(
      `SELECT event_id FROM bulk_replay_items WHERE intent_id = ? AND status = 'pending' ORDER BY seq DESC LIMIT 1`,
      [id],
    );
    const single = await api(s, token, 'POST', `/agent/v1/events/${pending?.event_id}/replay-intents`, {});
    expect(single.status, single.text).toBe(409);
    expect(single.json.code).toBe('replay_in_flight');
    worker();
    await executed(services, [id]);
    expect(await replaysOf(services, ids)).toEqual(once(ids));
    const claims = await claimsConsistent(services, ids);
    const items = await itemsOf(services, [id]);
    for (const c of claims) {
      expect(c.intent_id).toBe(id);
      expect(c.replay_event_id).toBe(items.find((i) => i.event_id === c.event_id)?.replay_event_id);
    }
  });
});

describe.runIf(testStore() === 'postgres')('confirmations from several processes on one PostgreSQL database', () => {
  it('four processes confirm bulk and single replays of the same events at once: one replay per event', async () => {
    const s = await server();
    const services = s.runtime.services;
    const sb = sandboxOf(s);
    const ids = await failedEvents(services, sb.shop_id, sb.endpoint_id, 10);
    const P = 4;
    const tokens = await Promise.all(Array.from({ length: P }, (_, i) => recoveryToken(s, `process-${i}`)));
    // Each process confirms one bulk replay of all ten events and one single replay of one of the
    // first two (each from its own grant): every event is asked for by five confirmations or six.
    const jobs: { token: string; intent_id: string; kind: string }[][] = [];
    for (let i = 0; i < P; i++) {
      const t = tokens[i] as string;
      const bulk = await api(s, t, 'POST', '/agent/v1/bulk-replay-intents', {});
      const single = await api(s, t, 'POST', `/agent/v1/events/${ids[i % 2]}/replay-intents`, {});
      expect([bulk.status, single.status], bulk.text + single.text).toEqual([201, 201]);
      jobs.push([
        { token: t, intent_id: bulk.json.id, kind: 'bulk' },
        { token: t, intent_id: single.json.id, kind: 'single' },
      ]);
    }
    const at = Date.now() + 4_000;
    const outputs = jobs.map((j) => {
      const child = spawn(PROJECT_NODE, ['tests/intents/fixtures/confirm-child.ts'], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          ...s.storeEnv,
          FLOWPORT_LOG_LEVEL: 'silent',
          FLOWPORT_WORKER: 'off',
          CONFIRM_JOBS: JSON.stringify(j),
          CONFIRM_AT: String(at),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const out = collectOutput(child);
      return new Promise<string>((resolve) => child.once('exit', () => resolve(out.read())));
    });
    const texts = await Promise.all(outputs);
    const results = texts.flatMap((t) =>
      t
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { intent_id: string; state?: string; code?: string }),
    );
    expect(results, texts.join('\n')).toHaveLength(2 * P);
    const kindOf = new Map(jobs.flat().map((j) => [j.intent_id, j.kind]));
    for (const r of results) {
      if (kindOf.get(r.intent_id) === 'bulk') expect(r.state, JSON.stringify(r)).toBe('confirmed');
      else expect(r.state ?? r.code, JSON.stringify(r)).toMatch(/^(executed|replay_in_flight)$/);
    }
    const bulks = jobs.map((j) => j[0]?.intent_id as string);
    runner(s);
    await executed(services, bulks);
    expect(await replaysOf(services, ids)).toEqual(once(ids));
    // Whoever won an event, everyone else was told why.
    const items = await itemsOf(services, bulks);
    const singlesWon = results.filter((r) => r.state === 'executed').length;
    expect(items.filter((i) => i.status === 'replayed').length + singlesWon).toBe(ids.length);
    for (const i of items.filter((x) => x.status !== 'replayed'))
      expect([i.status, i.reason]).toEqual(['refused', 'replay_in_flight']);
    await claimsConsistent(services, ids);
  });
});
