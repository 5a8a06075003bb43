// Outcomes that finish together are recorded in one group commit. On PostgreSQL the common
// kinds (final outcomes, plain retries) of a batch are written with one statement (the events'
// UPDATE and the attempts' as two CTEs), whatever the batch size (issue 45); SQLite writes them
// one row at a time. Either way
// each row ends as its own outcome says: state, support code, delivered_at, the attempt's outcome,
// HTTP status and duration; an event whose lease another worker took over meanwhile is left to
// that worker; and a rare kind in the middle of a batch (a 401) sees the outcomes recorded before
// it, as when each outcome ran its own statements.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Services } from '../../api/src/core/types.ts';
import type { FlowCallResult } from '../../api/src/handoff/flow-client.ts';
import { classifyFlowResult, SUPPORT_CODES } from '../../api/src/handoff/outcomes.ts';
import { DeliveryWorker } from '../../api/src/handoff/worker.ts';
import type { GroupCommitter } from '../../api/src/store/committer.ts';
import type { Db, SqlParam } from '../../api/src/store/db.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { attemptsOf, eventRow, flowResult, insertEvent, makeShop } from './helpers.ts';

type Claimed = Awaited<ReturnType<DeliveryWorker['claim']>>[number];
/** The worker's own recording step and group committer (private: driven here so outcomes finish together). */
interface WorkerInternals {
  record(ev: Claimed, c: ReturnType<typeof classifyFlowResult>, result: FlowCallResult, local: null): Promise<void>;
  recorder: GroupCommitter;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

/** The store as it is, noting the SQL of every statement run inside a transaction. */
function noting(db: Db, seen: string[]): Db {
  const note = (sql: string) => {
    seen.push(sql);
    return sql;
  };
  const wrap = (d: Db): Db => ({
    dialect: d.dialect,
    all: <T>(sql: string, params?: readonly SqlParam[]) => d.all<T>(note(sql), params),
    get: <T>(sql: string, params?: readonly SqlParam[]) => d.get<T>(note(sql), params),
    run: (sql: string, params?: readonly SqlParam[]) => d.run(note(sql), params),
    exec: (sql: string) => d.exec(sql),
    tx: (fn, options) => d.tx((tx) => fn(wrap(tx)), options),
    close: () => d.close(),
  });
  return wrap(db);
}

/** What Shopify's answer looks like to the worker (flow-client.ts), by kind. */
function answer(kind: 'ok' | 'invalid_handle' | '503' | 'timeout' | '401', durationMs: number): FlowCallResult {
  const base = flowResult({ durationMs });
  if (kind === 'invalid_handle') {
    const userErrors = [{ field: ['handle'], message: 'Invalid handle' }];
    return { ...base, userErrors, summary: { http_status: 200, user_errors: userErrors } };
  }
  if (kind === '503') return { ...base, httpStatus: 503, hasData: false, summary: { http_status: 503 } };
  if (kind === '401') return { ...base, httpStatus: 401, hasData: false, summary: { http_status: 401 } };
  if (kind === 'timeout')
    return {
      ...base,
      httpStatus: null,
      hasData: false,
      transportError: 'timeout',
      mayHaveReachedShopify: true,
      summary: { http_status: null, transport_error: 'timeout' },
    };
  return base;
}

it('outcomes finishing together: each row as its outcome says, a lost lease untouched, a 401 mid-batch in order', async () => {
  const base = server.runtime.services;
  const T = Date.now();
  const statements: string[] = [];
  // One clock for the whole test, so every time written is T.
  const services: Services = { ...base, db: noting(base.db, statements), now: () => T };
  const a = await makeShop(services);
  const b = await makeShop(services);
  const ids = {
    delivered: [] as string[],
    noWorkflow: '',
    retry: '',
    timeout: '',
    lost: '',
  };
  for (let i = 0; i < 3; i++) ids.delivered.push(await insertEvent(services, a.shop.id, a.endpointId));
  ids.noWorkflow = await insertEvent(services, a.shop.id, a.endpointId);
  ids.retry = await insertEvent(services, a.shop.id, a.endpointId);
  ids.timeout = await insertEvent(services, a.shop.id, a.endpointId);
  ids.lost = await insertEvent(services, a.shop.id, a.endpointId);
  const shopB = [
    await insertEvent(services, b.shop.id, b.endpointId),
    await insertEvent(services, b.shop.id, b.endpointId),
    await insertEvent(services, b.shop.id, b.endpointId),
  ];
  const late = await insertEvent(services, a.shop.id, a.endpointId);

  const worker = new DeliveryWorker(services, { adminBaseUrl: () => 'http://127.0.0.1:9' });
  const other = new DeliveryWorker(services, { adminBaseUrl: () => 'http://127.0.0.1:9' });
  const internals = worker as unknown as WorkerInternals;
  const claimed = new Map((await worker.claim(100)).map((ev) => [ev.id, ev]));
  expect(claimed.size).toBe(11);
  const ev = (id: string) => claimed.get(id) as Claimed;
  // Another worker takes over one lease (as if this one had stalled past it) before this one records.
  await services.db.run('UPDATE events SET lease_expires_at = 0 WHERE id = ?', [ids.lost]);
  expect((await other.claim(100)).map((e) => e.id)).toEqual([ids.lost]);
  const takenOver = await eventRow(services, ids.lost);

  /** Records every outcome in the same loop turn: they join one group commit. */
  const together = async (outcomes: [string, Parameters<typeof answer>[0], number][]) => {
    const before = { ...internals.recorder.stats };
    statements.length = 0;
    await Promise.all(
      outcomes.map(([id, kind, ms]) => {
        const r = answer(kind, ms);
        return internals.record(ev(id), classifyFlowResult(r), r, null);
      }),
    );
    const { stats } = internals.recorder;
    expect(stats.batches - before.batches).toBe(1);
    expect(stats.maxBatch).toBeGreaterThanOrEqual(outcomes.length);
    expect(stats.retriedBatches).toBe(before.retriedBatches);
    return {
      statements: statements.filter((s) => /\bUPDATE (events|attempts)\b/.test(s)).length,
      events: statements.filter((s) => /\bUPDATE events\b/.test(s)).length,
      attempts: statements.filter((s) => /\bUPDATE attempts\b/.test(s)).length,
    };
  };

  // 1. Common kinds only: delivered, no workflow, a 5xx and a timeout retry, and the lost lease.
  const common = await together([
    [ids.delivered[0] as string, 'ok', 11.4],
    [ids.retry, '503', 30.6],
    [ids.delivered[1] as string, 'ok', 12.5],
    [ids.noWorkflow, 'invalid_handle', 13],
    [ids.lost, 'ok', 14],
    [ids.timeout, 'timeout', 2000],
    [ids.delivered[2] as string, 'ok', 15],
  ]);
  // PostgreSQL: one statement for the whole batch; SQLite: one for each table per outcome.
  expect(common).toEqual(
    services.db.dialect === 'postgres'
      ? { statements: 1, events: 1, attempts: 1 }
      : { statements: 14, events: 7, attempts: 7 },
  );

  const ok = SUPPORT_CODES.delivered;
  for (const [i, id] of ids.delivered.entries()) {
    expect(await eventRow(services, id)).toMatchObject({
      state: 'delivered',
      support_code: ok.code,
      error_code: null,
      delivered_at: T,
      possible_duplicate_deliveries: 0,
    });
    const [attempt] = await attemptsOf(services, id);
    expect(attempt).toMatchObject({
      outcome: 'delivered',
      http_status: 200,
      error_code: null,
      duration_ms: [11, 13, 15][i],
      finished_at: T,
    });
    expect(JSON.parse(attempt?.flow_response ?? 'null')).toEqual({ http_status: 200 });
  }
  const nowf = SUPPORT_CODES.no_workflow;
  expect(await eventRow(services, ids.noWorkflow)).toMatchObject({
    state: 'no_workflow',
    support_code: nowf.code,
    error_code: nowf.errorCode,
    delivered_at: null,
  });
  expect((await attemptsOf(services, ids.noWorkflow))[0]).toMatchObject({
    outcome: 'no_workflow',
    http_status: 200,
    error_code: nowf.errorCode,
    duration_ms: 13,
  });
  const retried = await services.db.get<{ next_attempt_at: number; lease_owner: string | null }>(
    'SELECT next_attempt_at, lease_owner FROM events WHERE id = ?',
    [ids.retry],
  );
  expect(await eventRow(services, ids.retry)).toMatchObject({
    state: 'queued',
    support_code: SUPPORT_CODES.upstream_error.code,
    error_code: SUPPORT_CODES.upstream_error.errorCode,
    delivered_at: null,
    possible_duplicate_deliveries: 0,
  });
  expect(retried?.lease_owner).toBeNull();
  expect(Number(retried?.next_attempt_at)).toBeGreaterThanOrEqual(T);
  expect((await attemptsOf(services, ids.retry))[0]).toMatchObject({
    outcome: 'upstream_error',
    http_status: 503,
    error_code: SUPPORT_CODES.upstream_error.errorCode,
    duration_ms: 31,
  });
  // A timeout may have reached Flow: counted as a possible duplicate.
  expect(await eventRow(services, ids.timeout)).toMatchObject({
    state: 'queued',
    support_code: SUPPORT_CODES.timeout.code,
    possible_duplicate_deliveries: 1,
  });
  expect((await attemptsOf(services, ids.timeout))[0]).toMatchObject({
    outcome: 'timeout',
    http_status: null,
    duration_ms: 2000,
  });
  // The lease taken over: the event is the other worker's, exactly as its claim left it.
  expect(await eventRow(services, ids.lost)).toEqual(takenOver);
  expect(takenOver).toMatchObject({ state: 'delivering', attempt_count: 2, delivered_at: null });
  const lostAttempts = await attemptsOf(services, ids.lost);
  expect(lostAttempts.map((x) => x.outcome)).toContain('in_progress');

  // 2. A 401 between two retries of its shop, and a delivery after it: the retry recorded before
  // the 401 is held with the shop's other queued events; the one recorded after it is queued.
  await together([
    [shopB[0] as string, '503', 5],
    [shopB[1] as string, '401', 6],
    [late, 'ok', 7],
    [shopB[2] as string, '503', 8],
  ]);
  const held = SUPPORT_CODES.held;
  expect(await eventRow(services, shopB[0] as string)).toMatchObject({ state: 'held', support_code: held.code });
  expect(await eventRow(services, shopB[1] as string)).toMatchObject({
    state: 'held',
    support_code: SUPPORT_CODES.token_revoked.code,
  });
  expect(await eventRow(services, shopB[2] as string)).toMatchObject({
    state: 'queued',
    support_code: SUPPORT_CODES.upstream_error.code,
  });
  expect(await eventRow(services, late)).toMatchObject({ state: 'delivered', delivered_at: T });
  const outcomes = await Promise.all([...shopB, late].map(async (id) => (await attemptsOf(services, id))[0]?.outcome));
  expect(outcomes).toEqual(['upstream_error', 'token_revoked', 'upstream_error', 'delivered']);
  const shop = await services.db.get<{ connection_status: string }>(
    'SELECT connection_status FROM shops WHERE id = ?',
    [b.shop.id],
  );
  expect(shop?.connection_status).toBe('disconnected');
});
