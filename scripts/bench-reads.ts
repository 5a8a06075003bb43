// npm run bench:reads [-- --store sqlite|postgres --events 1000000 --requests 200 --keep --base <ref>]
// Reads at scale (issues 31 and 45): one shop with a million events, then every kind of agent
// read over HTTP with the sandbox grant: the events list (first page, filtered pages, a deep
// cursor), an event's detail, the receipts list, the grant, plan usage, setup and the endpoints.
// Goal: p99 < 10 ms each, on both stores, beside the page's build time in this process.
// The fill goes straight through the store layer (multi-row inserts, one transaction per
// 20,000 rows), not through intake. With --keep the store stays for the next run
// ($TMPDIR/flowport-bench-reads-<store>, PostgreSQL schema bench_reads_keep) and a store that
// already holds the events is not filled again; --refill empties it first.
// With --base <ref> (and --keep), that commit serves the same store from a second process and
// each kind's rounds alternate between it (A) and this tree (B), with CPU per request of each.
// Prints the load average first, the query plans of each read, and alternates the read kinds
// in rounds (median of the rounds' p99 and the p99 over all requests).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { newId } from '../api/src/ids.ts';
import { replayInFlightSql } from '../api/src/reads/replay-in-flight.ts';
import { SecretBox } from '../api/src/lib/crypto.ts';
import { recountEventCounts } from '../api/src/store/tables/events/counts.ts';
import { recountWindowCounts, windowParams } from '../api/src/store/tables/events/window-counts.ts';
import { type EventFilter, eventSummary, listEvents, withRecentDeliveries } from '../api/src/reads/events.ts';
import { listScope } from '../api/src/reads/paging.ts';
import { ENDPOINT_STATE_COUNTS_SQL } from '../api/src/reads/endpoints.ts';
import { senderOutcomesSql } from '../api/src/reads/readiness.ts';
import { LAST_EVENT_SQL } from '../api/src/reads/setup.ts';
import { sealCursor } from '../api/src/reads/shared.ts';
import { type Db, insertMany, type SqlParam } from '../api/src/store/db.ts';
import { withSearchPath } from '../api/src/store/postgres.ts';
import { testDatabaseUrl } from '../tests/helpers/store.ts';
import { parseStore, startBenchFlowport } from './lib/bench-flowport.ts';
import { familyDelta, pgServerCpu, processCpuSeconds } from './lib/proc-cpu.ts';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    events: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '200' /* < 600, the grant's limit per minute */ },
    rounds: { type: 'string', default: '5' },
    keep: { type: 'boolean', default: false },
    refill: { type: 'boolean', default: false },
    base: { type: 'string' },
  },
});
const STORE = parseStore(values.store);
const EVENTS = Number(values.events);
const REQUESTS = Number(values.requests);
const ROUNDS = Math.max(5, Number(values.rounds));

console.log(
  `bench:reads — load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (machine shared with other work; read ratios, not absolute figures)`,
);

// The store: kept between runs with --keep, fresh otherwise.
const KEEP_SCHEMA = 'bench_reads_keep';
let keep: { dataDir: string; databaseUrl: string | null } | undefined;
if (values.keep) {
  const dataDir = join(tmpdir(), `flowport-bench-reads-${STORE}`);
  let databaseUrl: string | null = null;
  if (STORE === 'postgres') {
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    if (values.refill) await admin.query(`DROP SCHEMA IF EXISTS ${KEEP_SCHEMA} CASCADE`);
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${KEEP_SCHEMA}`);
    await admin.end();
    databaseUrl = withSearchPath(testDatabaseUrl(), KEEP_SCHEMA);
  }
  if (values.refill) rmSync(dataDir, { recursive: true, force: true });
  if (!existsSync(dataDir)) mkdirSync(dataDir, { recursive: true });
  keep = { dataDir, databaseUrl };
}

const flowport = await startBenchFlowport({ store: STORE, worker: false, ...(keep ? { keep } : {}) });
// --base <ref>: that commit (A) serves the same kept store from a second process, from a temporary
// git worktree sharing this tree's node_modules; its rounds alternate with this tree's (B).
const root = join(import.meta.dirname, '..');
const git = (...a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
let base: { fp: typeof flowport; label: string; worktree: string } | null = null;
if (values.base) {
  if (!keep) throw new Error('--base needs --keep: both versions read the same kept store.');
  const commit = git('rev-parse', '--verify', `${values.base}^{commit}`);
  const worktree = join(mkdtempSync(join(tmpdir(), 'flowport-reads-ab-')), 'tree');
  git('worktree', 'add', '--detach', worktree, commit);
  symlinkSync(join(root, 'node_modules'), join(worktree, 'node_modules'), 'dir');
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  base = {
    fp: await startBenchFlowport({ store: STORE, worker: false, root: worktree, keep }),
    label: `${values.base} (${commit.slice(0, 10)}) against ${git('rev-parse', '--short=10', 'HEAD')}${dirty ? ' with uncommitted changes' : ''}`,
    worktree,
  };
}
const STATES: [string, number, string | null][] = [
  // state, share, support code
  ['delivered', 0.95, 'FP-H-OK'],
  ['failed', 0.03, 'FP-H-REJ'],
  ['no_workflow', 0.015, 'FP-H-NOWF'],
  ['held', 0.005, 'FP-H-HELD'],
];
const TYPES: [string, number][] = [
  ['order.created', 0.5],
  ['order.paid', 0.3],
  ['customer.created', 0.15],
  ['refund.issued', 0.049],
  ['dispute.opened', 0.001],
];
function pick<T>(list: [T, number, ...unknown[]][], r: number): number {
  let acc = 0;
  for (let i = 0; i < list.length; i++) {
    acc += list[i]?.[1] as number;
    if (r < acc) return i;
  }
  return list.length - 1;
}

async function fill(db: Db, shopId: string, endpointId: string): Promise<void> {
  const have = Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE shop_id = ?', [shopId]))?.n);
  if (have >= EVENTS) {
    console.log(`store already holds ${have.toLocaleString('en')} events for the shop (kept from an earlier run)`);
    // A kept store keeps the statistics of its fill (re-analyzing changes SQLite's plans: see
    // docs/benchmarks.md, issue 45's window reads); --refill to measure with a newer migration's.
    return;
  }
  const columns = [
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
    'config_version',
    'received_at',
    'updated_at',
    'attempt_count',
    'delivered_at',
    'body_expires_at',
  ];
  const t0 = performance.now();
  // A month of events, oldest first, so ids (time-sortable) follow received_at.
  const span = 30 * 86_400_000;
  const start = Date.now() - span - 60_000;
  const CHUNK = 20_000;
  let seed = 12345;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  for (let from = have; from < EVENTS; from += CHUNK) {
    const rows: SqlParam[][] = [];
    for (let i = from; i < Math.min(EVENTS, from + CHUNK); i++) {
      const at = Math.floor(start + (i / EVENTS) * span);
      const [state, , support] = STATES[pick(STATES, rnd())] as [string, number, string | null];
      const [type] = TYPES[pick(TYPES, rnd())] as [string, number];
      const body = `{"type":"${type}","id":"bench_${i}","n":${i}}`;
      rows.push([
        newId('event', at),
        shopId,
        endpointId,
        newId('receipt', at),
        // Intake's rows carry their request's id: their receipts are derived from them (ADR 0304).
        newId('request', at),
        state,
        support,
        `bench_${i}`,
        type,
        'bench',
        body,
        body.length,
        createHash('sha256').update(body).digest('hex'),
        1,
        at,
        at,
        1,
        state === 'delivered' ? at + 5 : null,
        at + 400 * 86_400_000,
      ]);
    }
    await db.tx(async (tx) => insertMany(tx, 'events', columns, rows));
    if ((from / CHUNK) % 10 === 0)
      process.stdout.write(`  filled ${(from + rows.length).toLocaleString('en')} / ${EVENTS.toLocaleString('en')}\r`);
  }
  // Rows written directly, as intake never would: plan usage's counts and the window's hourly
  // counts are counted from them (ADR 0312, 0313).
  await db.tx(async (tx) => {
    await recountEventCounts(tx);
    await recountWindowCounts(tx);
  });
  // PostgreSQL: VACUUM sets the visibility map index-only scans need (autovacuum would, later).
  await db.run(db.dialect === 'postgres' ? 'VACUUM ANALYZE events' : 'ANALYZE');
  console.log(
    `filled ${(EVENTS - have).toLocaleString('en')} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

try {
  const { creds } = flowport;
  const db = await flowport.openDb();
  await fill(db, creds.shop_id, creds.endpoint_id);
  // The deep cursor: the position after 900,000 events of the newest-first list (or 90% of the fill).
  const depth = Math.floor(EVENTS * 0.9);
  const deep = await db.get<{ id: string }>(
    `SELECT id FROM events WHERE shop_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
    [creds.shop_id, depth],
  );
  if (!deep) throw new Error('the fill left fewer events than the deep cursor needs');
  const secrets = SecretBox.fromDataDir(flowport.dataDir);
  const cursor = sealCursor(secrets, listScope('events', creds.shop_id, 'desc'), deep.id);

  const recent = await db.get<{ id: string }>(
    "SELECT id FROM events WHERE shop_id = ? AND state = 'delivered' ORDER BY id DESC LIMIT 1 OFFSET 100",
    [creds.shop_id],
  );
  type Kind = [name: string, query: string, filter: Partial<EventFilter> | null];
  const kinds: Kind[] = [
    // The baseline: an agent read through the same admission (grant, rate limit) that reads no events.
    ['baseline: GET /agent/v1/grant', '/grant', null],
    ['GET /agent/v1/plan-usage', '/plan-usage', null],
    ['GET /agent/v1/endpoints', '/endpoints', null],
    ['GET /agent/v1/setup', '/setup', null],
    ['GET /agent/v1/events/{id}', `/events/${recent?.id}`, null],
    ['GET /agent/v1/receipts', '/receipts?limit=50', null],
    ['first page', '', {}],
    ['state=failed', 'state=failed', { states: ['failed'] }],
    ['event_type=refund.issued (5%)', 'event_type=refund.issued', { eventType: 'refund.issued' }],
    ['event_type=dispute.opened (0.1%)', 'event_type=dispute.opened', { eventType: 'dispute.opened' }],
    [
      'state=failed&event_type=refund.issued',
      'state=failed&event_type=refund.issued',
      { states: ['failed'], eventType: 'refund.issued' },
    ],
    ['state=held,failed', 'state=held,failed', { states: ['held', 'failed'] }],
    // The replay filter: the replay rules and, per row, whether a claim holds the event (ADR 0410).
    ['replay_available=true', 'replay_available=true', { replayAvailable: true }],
    [
      `deep cursor (after ${depth.toLocaleString('en')})`,
      `cursor=${encodeURIComponent(cursor)}`,
      { cursorId: deep.id },
    ],
  ];

  // The plans of the list query for each kind, as the store reads it (reads/events.ts listEvents).
  const explain = db.dialect === 'postgres' ? 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)' : 'EXPLAIN QUERY PLAN';
  const page = (where: string) =>
    `SELECT e.id FROM events e JOIN endpoints ep ON ep.id = e.endpoint_id WHERE e.shop_id = ? ${where} ORDER BY e.id DESC LIMIT 51`;
  const planOf = async (where: string, params: SqlParam[]) => {
    // Several states: the union of one page per state, as listEvents reads them.
    const states = where === 'STATES' ? (params as string[]) : null;
    const sql = states
      ? `${states.map((_, i) => `SELECT * FROM (${page('AND e.state = ?')}) AS s${i}`).join(' UNION ALL ')} ORDER BY id DESC LIMIT 51`
      : page(where);
    const rows = await db.all<Record<string, string>>(
      `${explain} ${sql}`,
      states ? states.flatMap((st) => [creds.shop_id, st]) : [creds.shop_id, ...params],
    );
    return rows.map((r) => r.detail ?? r['QUERY PLAN']).join('\n      ');
  };
  const plans: [string, string, SqlParam[]][] = [
    ['first page', '', []],
    ['state=failed', 'AND e.state = ?', ['failed']],
    ['event_type', 'AND e.event_type = ?', ['refund.issued']],
    ['rare event_type', 'AND e.event_type = ?', ['dispute.opened']],
    ['state+type', 'AND e.event_type = ? AND e.state = ?', ['refund.issued', 'failed']],
    ['state=held,failed', 'STATES', ['held', 'failed']],
    ['deep cursor', 'AND e.id < ?', [deep.id]],
    // replay_available=true's claim part: no replay in flight (ADR 0410), an indexed lookup per row.
    ['no replay in flight', `AND NOT ${replayInFlightSql('e.id')}`, []],
  ];
  console.log('query plans:');
  for (const [name, where, params] of plans) console.log(`  ${name}:\n      ${await planOf(where, params)}`);
  // The reads of the shop's last 24 hours (endpoints, setup: hourly counts and the first part-hour,
  // ADR 0313) and setup's newest times (migration 1760).
  const since = Date.now() - 24 * 3_600_000;
  const windowPlans: [string, string, SqlParam[]][] = [
    ['endpoints: 24 h by endpoint and state', ENDPOINT_STATE_COUNTS_SQL, windowParams(creds.shop_id, since)],
    ['setup: 24 h sender outcomes', senderOutcomesSql(false), windowParams(creds.shop_id, since)],
    ['setup: newest received and delivered', LAST_EVENT_SQL, [creds.shop_id, creds.shop_id]],
  ];
  for (const [name, sql, params] of windowPlans) {
    const rows = await db.all<Record<string, string>>(`${explain} ${sql}`, params);
    console.log(`  ${name}:\n      ${rows.map((r) => r.detail ?? r['QUERY PLAN']).join('\n      ')}`);
  }
  // The shop's limits lifted for the run (per-minute rates and monthly read caps), so the bench
  // measures reads, not the limit's answer; every read is still counted as in production.
  await db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [
    JSON.stringify({
      ratePerMinute: { perGrant: 1e9, perShop: 1e9 },
      monthly: { simpleReads: 1e12, richReads: 1e12 },
    }),
    creds.shop_id,
  ]);
  // The sides timed: this tree (B) and, with --base, another commit (A) serving the same kept
  // store from a second process, their rounds alternating (A and B swap order each round).
  type Side = { label: string; fp: typeof flowport };
  const sides: Side[] = [...(base ? [{ label: 'A', fp: base.fp }] : []), { label: base ? 'B' : '', fp: flowport }];

  const get = async (side: Side, query: string): Promise<number> => {
    const t0 = performance.now();
    const path = query.startsWith('/') ? `/agent/v1${query}` : `/agent/v1/events?limit=50${query ? `&${query}` : ''}`;
    const res = await fetch(`${side.fp.url}${path}`, {
      headers: { authorization: `Bearer ${creds.grant_token}` },
    });
    const body = (await res.json()) as { data?: unknown[] };
    const t = performance.now() - t0;
    if (query.startsWith('/')) {
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
      return t;
    }
    if (res.status !== 200 || !Array.isArray(body.data) || body.data.length === 0)
      throw new Error(`events list (${query}) answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
    return t;
  };
  // A kind whose answer takes far longer than the goal at this size is timed three times and left
  // out of the rounds (a thousand requests of it would take the run's time, not tell more).
  const SLOW_MS = 250;
  const slow: string[] = [];
  for (const kind of [...kinds]) {
    const b = sides[sides.length - 1] as Side;
    const t = [await get(b, kind[1]), await get(b, kind[1]), await get(b, kind[1])].sort((x, y) => x - y);
    if ((t[1] as number) > SLOW_MS) {
      console.log(
        `${kind[0].padEnd(44)} too slow to time in rounds: ${t.map((x) => x.toFixed(0)).join(', ')} ms (goal < 10 ms NOT met)`,
      );
      kinds.splice(kinds.indexOf(kind), 1);
      slow.push(kind[0]);
    }
  }
  // Warm-up: caches, prepared statements, JIT.
  for (const side of sides) for (const [, q] of kinds) for (let i = 0; i < 20; i++) await get(side, q);

  // CPU per request: the Flowport process's and, on PostgreSQL, its backends' (the server
  // processes serving its connections); load-independent where latency is not.
  const admin = STORE === 'postgres' ? new pg.Client({ connectionString: testDatabaseUrl() }) : null;
  await admin?.connect();
  const cpuNow = async (side: Side) => ({
    fp: processCpuSeconds(side.fp.pid) ?? Number.NaN,
    db: admin ? await pgServerCpu(admin, side.fp.pid) : null,
  });

  console.log(
    `\nagent reads over HTTP (events lists: GET /agent/v1/events?limit=50) on ${flowport.storeLabel}, ${EVENTS.toLocaleString('en')} events in the shop; ` +
      `${ROUNDS} rounds × ${REQUESTS} sequential requests per kind, kinds alternating${base ? `; A: ${base.label}, B: this tree, alternating` : ''}`,
  );
  const key = (side: Side, name: string) => `${side.label}\n${name}`;
  const all = new Map<string, number[]>();
  const roundP99 = new Map<string, number[]>();
  const cpuFp = new Map<string, number[]>();
  const cpuDb = new Map<string, number[]>();
  const push = (m: Map<string, number[]>, k: string, ...x: number[]) => m.set(k, [...(m.get(k) ?? []), ...x]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, q] of round % 2 ? [...kinds].reverse() : kinds) {
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        const times: number[] = [];
        const before = await cpuNow(side);
        for (let i = 0; i < REQUESTS; i++) times.push(await get(side, q));
        const after = await cpuNow(side);
        times.sort((a, b) => a - b);
        const k = key(side, name);
        push(all, k, ...times);
        push(roundP99, k, pct(times, 99));
        push(cpuFp, k, ((after.fp - before.fp) * 1e6) / REQUESTS);
        if (before.db && after.db)
          push(cpuDb, k, (familyDelta(before.db.backends, after.db.backends) * 1e6) / REQUESTS);
      }
    }
  }
  await admin?.end();
  const median = (xs: number[]) =>
    pct(
      [...xs].sort((x, y) => x - y),
      50,
    );
  let met = slow.length === 0;
  for (const [name] of kinds) {
    for (const side of sides) {
      const k = key(side, name);
      const a = (all.get(k) ?? []).sort((x, y) => x - y);
      const r = (roundP99.get(k) ?? []).sort((x, y) => x - y);
      const p99 = pct(a, 99);
      if (side.fp === flowport && !(p99 < 10)) met = false;
      const cpu = `CPU per request ${median(cpuFp.get(k) ?? []).toFixed(0)} µs Flowport${cpuDb.has(k) ? ` + ${median(cpuDb.get(k) ?? []).toFixed(0)} µs PostgreSQL` : ''}`;
      console.log(
        `${(side.label ? `${side.label} ${name}` : name).padEnd(44)} p50 ${pct(a, 50).toFixed(2).padStart(7)} ms   p99 ${p99.toFixed(2).padStart(7)} ms   median of rounds' p99 ${pct(r, 50).toFixed(2).padStart(7)} ms   ${cpu}`,
      );
    }
  }
  console.log(`goal p99 < 10 ms for each (over HTTP${base ? ', this tree' : ''}): ${met ? 'met' : 'NOT met'}`);
  console.log(
    `load average now ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );

  // The same reads without HTTP, admission or the server's event loop: listEvents() on this
  // process's own connection to the store, so the query's share of the figures above shows.
  const services = { db, now: Date.now };
  // The page as listEventsPage builds it, less HTTP, admission and the response's validation.
  const list = async (f: Partial<EventFilter>) => {
    const { rows, facts } = await listEvents(services, creds.shop_id, {
      order: 'desc',
      limit: 50,
      cursorId: null,
      ...f,
    });
    await withRecentDeliveries(db, creds.shop_id, facts, rows, 600_000);
    return JSON.stringify(rows.map((r) => eventSummary(r, facts)));
  };
  const direct = kinds.filter((k): k is [string, string, Partial<EventFilter>] => k[2] !== null);
  for (const [, , f] of direct) for (let i = 0; i < 20; i++) await list(f);
  console.log(
    `\nin this process: listEvents(), the recent-delivery check and the summaries, no HTTP or admission, ${ROUNDS} rounds × ${REQUESTS}:`,
  );
  const directAll = new Map<string, number[]>(direct.map(([n]) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, , f] of round % 2 ? [...direct].reverse() : direct) {
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now();
        await list(f);
        directAll.get(name)?.push(performance.now() - t0);
      }
    }
  }
  for (const [name] of direct) {
    const a = (directAll.get(name) ?? []).sort((x, y) => x - y);
    console.log(
      `${name.padEnd(44)} p50 ${pct(a, 50).toFixed(2).padStart(7)} ms   p99 ${pct(a, 99).toFixed(2).padStart(7)} ms`,
    );
  }
  await db.close();
} finally {
  await flowport.stop();
  if (base) {
    await base.fp.stop();
    git('worktree', 'remove', '--force', base.worktree);
    rmSync(join(base.worktree, '..'), { recursive: true, force: true });
  }
}
