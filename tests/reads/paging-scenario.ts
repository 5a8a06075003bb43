// The events-paging scenario of listEvents-paging.test.ts (run once on each store):
// 100,000+ stored events, paged over real HTTP with several filter combinations
// while new events keep arriving, checked against direct SQL.
//
// Semantics this checks (api/src/reads/events.ts, api/src/operations/events/list.ts):
// - Order is the event id (time-sortable: the id starts with the receive time), newest
//   first by default, `order=asc` oldest first. Ties in received_at are broken by the id.
// - Paging is keyset: the cursor stands for "ids strictly after the last one returned"
//   in the paging direction, so every event that existed when paging started and
//   matches the filter is returned exactly once, whatever arrives meanwhile.
// - An event committed while paging is returned if and only if it matches the filter
//   and its id sorts after the page already returned (in `desc`, events arriving now
//   sort before page one, so they are never returned; in `asc` they come at the end).
// - Cursors are sealed (authenticated encryption with the server key) and bound to the
//   shop and the order: a garbage, edited, forged or other shop's cursor → 400.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { isErrorCode } from '../../api/src/errors/catalog.ts';
import { EVENT_STATES } from '../../api/src/handoff/outcomes.ts';
import { newId } from '../../api/src/ids.ts';
import { DEFAULT_HMAC, insertEndpoint, PLAIN_MAPPING } from '../../api/src/services/endpoints.ts';
import type { Db, SqlParam } from '../../api/src/store/db.ts';
import { makeShop } from '../handoff/helpers.ts';
import type { TestServer } from '../helpers/runtime.ts';
import { countStoredEvents } from '../../api/src/store/tables/events/window-counts.ts';

export const STORED_EVENTS = 100_000;
const OTHER_SHOP_EVENTS = 5_000;
const DAY = 86_400_000;
const SENDERS = ['stripe', 'github', 'erp', '3pl', 'shopify'] as const;
const EVENT_TYPES = ['order.paid', 'order.refunded', 'invoice.paid', 'push', 'shipment.created', null] as const;
const SUPPORT_CODES: Record<string, readonly (string | null)[]> = {
  accepted: [null],
  queued: [null, 'FP-H-THR', 'FP-H-5XX'],
  delivering: [null],
  held: ['FP-H-HELD', 'FP-H-AUTH'],
  delivered: ['FP-H-OK'],
  no_workflow: ['FP-H-NOWF'],
  failed: ['FP-H-SIZE', 'FP-H-REJ'],
  duplicate_suppressed: ['FP-I-DUP'],
  rejected: ['FP-H-REJ'],
};
const STATE_WEIGHTS: Record<string, number> = {
  accepted: 1,
  queued: 6,
  delivering: 1,
  held: 2,
  delivered: 55,
  no_workflow: 8,
  failed: 12,
  duplicate_suppressed: 5,
  rejected: 10,
};

/** Deterministic choices (mulberry32) so a failing seed can be rerun with FLOWPORT_TEST_SEED. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * An event id minted at `ms` (the shape api/src/ids.ts mints: 10 time characters, 16 random),
 * so stored ids sort like their received_at, as intake's do. newId() cannot backdate:
 * it is monotonic within the process.
 */
let pool = Buffer.alloc(0);
let poolAt = 0;

function eventIdAt(ms: number): string {
  let time = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  if (poolAt + 16 > pool.length) {
    pool = randomBytes(16 * 4096);
    poolAt = 0;
  }
  let rand = '';
  for (let i = 0; i < 16; i++) rand += CROCKFORD[(pool[poolAt + i] ?? 0) % 32];
  poolAt += 16;
  return `evt_${time}${rand}`;
}

interface Ctx {
  server: TestServer;
  db: Db;
  shopA: string;
  shopB: string;
  endpoints: string[];
  endpointB: string;
  tokenA: string;
  tokenB: string;
  rand: () => number;
  now: number;
}

const COLUMNS = [
  'id',
  'shop_id',
  'endpoint_id',
  'receipt_id',
  'state',
  'support_code',
  'error_code',
  'external_event_id',
  'event_type',
  'sender',
  'body',
  'body_size',
  'body_sha256',
  'config_version',
  'received_at',
  'updated_at',
  'next_attempt_at',
  'retention_state',
  'delivered_at',
  'attempt_count',
] as const;
const BODY = '{"type":"paging"}';
const BODY_SHA = createHash('sha256').update(BODY).digest('hex');

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)] as T;
}

function pickState(rand: () => number): string {
  const total = Object.values(STATE_WEIGHTS).reduce((a, b) => a + b, 0);
  let r = rand() * total;
  for (const s of EVENT_STATES) {
    r -= STATE_WEIGHTS[s] ?? 0;
    if (r < 0) return s;
  }
  return 'delivered';
}

/** One random event row for `shopId`, received at `receivedAt` (its id minted then). */
function eventRow(
  rand: () => number,
  shopId: string,
  endpointId: string,
  receivedAt: number,
  n: number,
  idOverride?: string,
): SqlParam[] {
  const id = idOverride ?? eventIdAt(receivedAt);
  const state = pickState(rand);
  const expired = rand() < 0.1;
  const delivered = state === 'delivered' ? receivedAt + 1_000 : null;
  return [
    id,
    shopId,
    endpointId,
    `rcpt_${id.slice(4)}`,
    state,
    pick(rand, SUPPORT_CODES[state] ?? [null]),
    state === 'failed' ? 'flow_payload_rejected' : null,
    // A handful share one external id (the limit=1 pass); most have their own or none.
    n % 25_000 === 7 ? 'ext-shared' : rand() < 0.5 ? `ext-${n}` : null,
    pick(rand, EVENT_TYPES),
    pick(rand, SENDERS),
    expired ? null : BODY,
    BODY.length,
    BODY_SHA,
    1,
    receivedAt,
    receivedAt,
    state === 'queued' ? receivedAt + 60_000 : null,
    expired ? 'expired' : 'retained',
    delivered,
    state === 'accepted' ? 0 : 1,
  ];
}

/** Multi-row INSERTs (1,000 rows a statement) in a few large transactions. */
async function insertRows(db: Db, rows: SqlParam[][]): Promise<void> {
  const perStatement = 1_000;
  const perTx = 25_000;
  for (let t = 0; t < rows.length; t += perTx) {
    const txRows = rows.slice(t, t + perTx);
    await db.tx(async (tx) => {
      for (let i = 0; i < txRows.length; i += perStatement) {
        const chunk = txRows.slice(i, i + perStatement);
        const tuple = `(${COLUMNS.map(() => '?').join(', ')})`;
        await tx.run(
          `INSERT INTO events (${COLUMNS.join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`,
          chunk.flat(),
        );
      }
      // Written directly: the window's counts are added as an insert path would (ADR 0313).
      await countStoredEvents(
        tx,
        txRows.map((r) => r[0] as string),
      );
    });
  }
}

async function seed(server: TestServer, seedValue: number): Promise<Ctx> {
  const services = server.runtime.services;
  const { db } = services;
  const rand = prng(seedValue);
  const now = Date.now();
  const limits = JSON.stringify({
    monthly: { richReads: 10_000_000, simpleReads: 10_000_000 },
    ratePerMinute: { perGrant: 1_000_000, perShop: 1_000_000 },
  });
  const a = await makeShop(services);
  const b = await makeShop(services);
  const endpoints = [a.endpointId];
  for (const name of ['second', 'paused', 'archived']) {
    const ep = await insertEndpoint(
      services,
      a.shop.id,
      {
        name,
        senderLabel: name,
        triggerVariant: 'external_event',
        authMode: 'hmac_sha256',
        hmac: DEFAULT_HMAC,
        mapping: PLAIN_MAPPING,
      },
      'fpsec_paging_test_secret_value',
    );
    endpoints.push(ep.id);
  }
  await db.run("UPDATE endpoints SET status = 'paused' WHERE id = ?", [endpoints[2]!]);
  await db.run("UPDATE endpoints SET status = 'archived', archived_at = ? WHERE id = ?", [now, endpoints[3]!]);
  for (const shop of [a.shop.id, b.shop.id]) {
    await db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [limits, shop]);
  }
  const rows: SqlParam[][] = [];
  for (let i = 0; i < STORED_EVENTS; i++) {
    // Whole-second times for a tenth of them, so many share a received_at and the id breaks the tie.
    let at = now - 60_000 - Math.floor(rand() * 30 * DAY);
    if (i % 10 === 0) at -= at % 1_000;
    rows.push(eventRow(rand, a.shop.id, pick(rand, endpoints), at, i));
  }
  for (let i = 0; i < OTHER_SHOP_EVENTS; i++) {
    rows.push(eventRow(rand, b.shop.id, b.endpointId, now - 60_000 - Math.floor(rand() * 30 * DAY), i + 1));
  }
  // In id order, as intake stores them (B-tree appends keep the setup fast); the backdated
  // arrivals below land in the middle, so insert order and id order still differ.
  rows.sort((x, y) => (String(x[0]) < String(y[0]) ? -1 : 1));
  const built = Date.now();
  await insertRows(db, rows);
  // A bulk load is followed by ANALYZE on Postgres (autovacuum would do it within a minute);
  // without statistics the planner sorts the whole shop for every page.
  if (db.dialect === 'postgres') await db.exec('ANALYZE events');
  console.log(`[paging] built ${rows.length} rows in ${built - now} ms, stored in ${Date.now() - built} ms`);
  const grant = async (shopId: string) =>
    (
      await createGrant(services, {
        shopId,
        tier: 'observer',
        actorKind: 'agent',
        actorName: 'pager',
        expiresInMs: 3_600_000,
      })
    ).token;
  return {
    server,
    db,
    shopA: a.shop.id,
    shopB: b.shop.id,
    endpoints,
    endpointB: b.endpointId,
    tokenA: await grant(a.shop.id),
    tokenB: await grant(b.shop.id),
    rand,
    now,
  };
}

interface ListResult {
  status: number;
  body: {
    code?: string;
    data: { id: string; received_at: string; replay: { available: boolean } }[];
    page: { next_cursor: string | null; has_more: boolean; limit: number };
  };
}

async function list(ctx: Ctx, token: string, query: Record<string, string>): Promise<ListResult> {
  const r = await fetch(`${ctx.server.url}/agent/v1/events?${new URLSearchParams(query)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: r.status, body: (await r.json()) as ListResult['body'] };
}

interface Combo {
  name: string;
  query: (c: Ctx) => Record<string, string>;
  /** The same filter as SQL over `events e JOIN endpoints ep`, written independently of the implementation. */
  where: (c: Ctx) => { sql: string; params: SqlParam[] };
  /** Make some arriving events match this filter. */
  arriving: (c: Ctx) => Partial<Record<'endpoint_id' | 'state' | 'sender' | 'event_type' | 'support_code', string>>;
}

const iso = (ms: number) => new Date(ms).toISOString();

const COMBOS: Combo[] = [
  {
    name: 'no filter, newest first, 200 a page',
    query: () => ({ limit: '200' }),
    where: () => ({ sql: '1 = 1', params: [] }),
    arriving: () => ({}),
  },
  {
    name: 'one endpoint and two states, oldest first, 137 a page',
    query: (c) => ({ endpoint_id: c.endpoints[1]!, state: 'failed,no_workflow', order: 'asc', limit: '137' }),
    where: (c) => ({ sql: "e.endpoint_id = ? AND e.state IN ('failed', 'no_workflow')", params: [c.endpoints[1]!] }),
    arriving: (c) => ({ endpoint_id: c.endpoints[1]!, state: 'failed' }),
  },
  {
    name: 'sender and event type, newest first, 50 a page',
    query: () => ({ sender: 'erp', event_type: 'order.paid', limit: '50' }),
    where: () => ({ sql: "e.sender = 'erp' AND e.event_type = 'order.paid'", params: [] }),
    arriving: () => ({ sender: 'erp', event_type: 'order.paid' }),
  },
  {
    name: 'support code within a received_at window, newest first, 200 a page',
    query: (c) => ({
      support_code: 'FP-H-REJ',
      received_after: iso(c.now - 20 * DAY),
      received_before: iso(c.now - 5 * DAY),
      limit: '200',
    }),
    where: (c) => ({
      sql: "e.support_code = 'FP-H-REJ' AND e.received_at >= ? AND e.received_at < ?",
      params: [c.now - 20 * DAY, c.now - 5 * DAY],
    }),
    arriving: () => ({ support_code: 'FP-H-REJ' }),
  },
  {
    name: 'replayable now, newest first, 200 a page',
    query: () => ({ replay_available: 'true', limit: '200' }),
    // The documented rule: a terminal, non-rejected, non-duplicate event whose body is retained,
    // on an endpoint that is neither archived nor deleted (the shop is connected, replays remain).
    where: () => ({
      sql: `e.state IN ('delivered', 'no_workflow', 'failed') AND e.retention_state = 'retained' AND e.body IS NOT NULL
        AND ep.status <> 'archived' AND ep.deleted_at IS NULL`,
      params: [],
    }),
    arriving: () => ({ state: 'delivered' }),
  },
  {
    name: 'received in the last 10 days, oldest first, 173 a page',
    query: (c) => ({ received_after: iso(c.now - 10 * DAY), order: 'asc', limit: '173' }),
    where: (c) => ({ sql: 'e.received_at >= ?', params: [c.now - 10 * DAY] }),
    arriving: () => ({}),
  },
  {
    name: 'one external event id, 1 a page',
    query: () => ({ external_event_id: 'ext-shared', limit: '1' }),
    where: () => ({ sql: "e.external_event_id = 'ext-shared'", params: [] }),
    arriving: () => ({}),
  },
];

async function expectedIds(ctx: Ctx, combo: Combo, order: 'asc' | 'desc'): Promise<string[]> {
  const w = combo.where(ctx);
  const rows = await ctx.db.all<{ id: string }>(
    `SELECT e.id FROM events e JOIN endpoints ep ON ep.id = e.endpoint_id WHERE e.shop_id = ? AND ${w.sql} ORDER BY e.id ${order === 'asc' ? 'ASC' : 'DESC'}`,
    [ctx.shopA, ...w.params],
  );
  return rows.map((r) => r.id);
}

/** Inserts 0–2 events into either shop; some match the combo, a few carry an older (backdated) id. */
async function arrive(ctx: Ctx, combo: Combo, n: number): Promise<string[]> {
  const rows: SqlParam[][] = [];
  const ids: string[] = [];
  const count = Math.floor(ctx.rand() * 3);
  for (let i = 0; i < count; i++) {
    const own = ctx.rand() < 0.8;
    const shop = own ? ctx.shopA : ctx.shopB;
    const endpoint = own ? pick(ctx.rand, ctx.endpoints) : ctx.endpointB;
    // Most arrive now (a fresh id); one in five was minted earlier and commits late, as a
    // slow transaction in another API process would.
    const backdated = ctx.rand() < 0.2;
    const at = backdated ? ctx.now - 60_000 - Math.floor(ctx.rand() * 30 * DAY) : Date.now();
    const id = backdated ? eventIdAt(at) : newId('event');
    const row = eventRow(ctx.rand, shop, endpoint, at, 1_000_000 + n * 10 + i, id);
    if (own && ctx.rand() < 0.7) {
      const m = combo.arriving(ctx);
      const set = (col: (typeof COLUMNS)[number], v: string | undefined) => {
        if (v !== undefined) row[COLUMNS.indexOf(col)] = v;
      };
      set('endpoint_id', m.endpoint_id);
      set('state', m.state);
      set('sender', m.sender);
      set('event_type', m.event_type);
      set('support_code', m.support_code);
      if (m.state === 'delivered') {
        row[COLUMNS.indexOf('body')] = BODY;
        row[COLUMNS.indexOf('retention_state')] = 'retained';
      }
    }
    rows.push(row);
    ids.push(id);
  }
  if (rows.length) await insertRows(ctx.db, rows);
  return ids;
}

interface Pass {
  pages: number;
  seen: string[];
  /** Ids inserted while paging, with the last id returned before each was inserted. */
  arrived: { id: string; after: string | null }[];
}

async function pageThrough(ctx: Ctx, combo: Combo, withArrivals: boolean): Promise<Pass> {
  const query = combo.query(ctx);
  const seen: string[] = [];
  const arrived: Pass['arrived'] = [];
  let cursor: string | null = null;
  let pages = 0;
  for (;;) {
    const r = await list(ctx, ctx.tokenA, cursor ? { ...query, cursor } : query);
    expect(r.status, `${r.body.code}`).toBe(200);
    pages++;
    const { data, page } = r.body;
    expect(page.limit).toBe(Number(query.limit));
    expect(data.length).toBeLessThanOrEqual(page.limit);
    seen.push(...data.map((e) => e.id));
    // The store-side replay filter agrees with each event's own replay availability.
    if (query.replay_available) {
      for (const e of data) expect(e.replay.available, e.id).toBe(query.replay_available === 'true');
    }
    if (!page.has_more) {
      expect(page.next_cursor).toBeNull();
      break;
    }
    expect(data.length).toBe(page.limit);
    expect(page.next_cursor).toEqual(expect.any(String));
    cursor = page.next_cursor;
    if (withArrivals) {
      const last = seen.at(-1) ?? null;
      for (const id of await arrive(ctx, combo, pages)) arrived.push({ id, after: last });
    }
    if (pages > STORED_EVENTS) throw new Error('paging does not terminate');
  }
  return { pages, seen, arrived };
}

export interface PagingBackend {
  name: string;
  start(): Promise<TestServer>;
  stop?(): Promise<void>;
}

export function describeEventsPaging(backend: PagingBackend): void {
  describe(`GET /agent/v1/events over ${STORED_EVENTS.toLocaleString('en')} stored events (${backend.name})`, () => {
    const seedValue = Number(process.env.FLOWPORT_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const at = `seed ${seedValue}`;
    let ctx: Ctx;

    beforeAll(async () => {
      const server = await backend.start();
      const started = Date.now();
      ctx = await seed(server, seedValue);
      const n = await ctx.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM events WHERE shop_id = ?', [ctx.shopA]);
      expect(Number(n?.n)).toBe(STORED_EVENTS);
      console.log(
        `[paging ${backend.name}] stored ${STORED_EVENTS + OTHER_SHOP_EVENTS} events in ${Date.now() - started} ms (${at})`,
      );
    }, 180_000);
    afterAll(async () => {
      await ctx?.server.close();
      await backend.stop?.();
    });

    it.each(COMBOS.map((c) => [c.name, c] as const))(
      '%s: pages are exactly the expected set, in a stable order, while events arrive',
      async (_name, combo) => {
        const order = combo.query(ctx).order === 'asc' ? 'asc' : 'desc';
        const before = await expectedIds(ctx, combo, order);
        expect(before.length, at).toBeGreaterThan(0);
        const pass = await pageThrough(ctx, combo, true);
        // No duplicates, and the concatenated pages are strictly ordered by id in the paging direction.
        expect(new Set(pass.seen).size, at).toBe(pass.seen.length);
        for (let i = 1; i < pass.seen.length; i++) {
          const ok = order === 'asc' ? pass.seen[i - 1]! < pass.seen[i]! : pass.seen[i - 1]! > pass.seen[i]!;
          if (!ok) expect.fail(`${at}: ${pass.seen[i - 1]} then ${pass.seen[i]} breaks ${order} order`);
        }
        // Every event that existed when paging started is there: no gaps.
        const seen = new Set(pass.seen);
        const missing = before.filter((id) => !seen.has(id));
        expect(missing, at).toEqual([]);
        // Arrivals appear exactly when they match and sort after what was already returned.
        const now = new Set(await expectedIds(ctx, combo, order));
        const beyond = (id: string, after: string | null) =>
          after === null || (order === 'asc' ? id > after : id < after);
        const expectedArrivals = pass.arrived.filter((a) => now.has(a.id) && beyond(a.id, a.after)).map((a) => a.id);
        const initial = new Set(before);
        const extra = pass.seen.filter((id) => !initial.has(id));
        expect(extra.sort(), at).toEqual(expectedArrivals.sort());
        console.log(
          `[paging ${backend.name}] ${combo.name}: ${before.length} events in ${pass.pages} pages, ${pass.arrived.length} arrived meanwhile (${expectedArrivals.length} returned)`,
        );
      },
      120_000,
    );

    it('a second pass over the same data returns the same pages (stable order)', async () => {
      const combo = COMBOS[2]!;
      const a = await pageThrough(ctx, combo, false);
      const b = await pageThrough(ctx, combo, false);
      expect(b.seen, at).toEqual(a.seen);
      expect(a.seen, at).toEqual(await expectedIds(ctx, combo, 'desc'));
    });

    it('replay_available=false lists only events that cannot be replayed now', async () => {
      let cursor: string | null = null;
      for (let i = 0; i < 5; i++) {
        const r = await list(ctx, ctx.tokenA, {
          replay_available: 'false',
          limit: '200',
          ...(cursor ? { cursor } : {}),
        });
        expect(r.status).toBe(200);
        expect(r.body.data.length).toBe(200);
        for (const e of r.body.data) expect(e.replay.available, e.id).toBe(false);
        cursor = r.body.page.next_cursor;
      }
    });

    it('received_at is non-increasing newest first (the id order is the receive order)', async () => {
      const r = await list(ctx, ctx.tokenA, { limit: '200' });
      const times = r.body.data.map((e) => Date.parse(e.received_at));
      for (let i = 1; i < times.length; i++) expect(times[i]!).toBeLessThanOrEqual(times[i - 1]!);
    });

    describe('cursors are opaque and tamper-proof', () => {
      let cursor = '';
      let lastId = '';
      beforeAll(async () => {
        const r = await list(ctx, ctx.tokenA, { limit: '5' });
        cursor = r.body.page.next_cursor!;
        lastId = r.body.data.at(-1)!.id;
      });

      const refused = async (token: string, query: Record<string, string>) => {
        const r = await list(ctx, token, query);
        expect(r.status, `cursor ${query.cursor} answered ${r.status} ${r.body.code ?? ''}`).toBe(400);
        expect(r.body.code).toBe('invalid_request');
        expect(isErrorCode(r.body.code!)).toBe(true);
        expect(r.body.data).toBeUndefined();
        return r;
      };

      it('a cursor reveals neither the event id nor the shop', () => {
        const decoded = Buffer.from(cursor, 'base64url').toString('latin1');
        for (const text of [cursor, decoded]) {
          for (const secret of [lastId, lastId.slice(4), ctx.shopA, ctx.shopA.slice(5)]) {
            expect(text).not.toContain(secret);
          }
        }
        expect(cursor.length).toBeLessThanOrEqual(200);
      });

      it('garbage → 400 invalid_request', async () => {
        for (const bad of ['abc', '!!!', 'x'.repeat(200), 'djE6']) {
          await refused(ctx.tokenA, { cursor: bad });
        }
      });

      it('a cursor with one character changed → 400', async () => {
        for (const i of [0, Math.floor(cursor.length / 2), cursor.length - 1]) {
          const c = cursor[i] === 'A' ? 'B' : 'A';
          await refused(ctx.tokenA, { cursor: `${cursor.slice(0, i)}${c}${cursor.slice(i + 1)}` });
        }
      });

      it('a forged cursor naming an event id → 400', async () => {
        const some = (await list(ctx, ctx.tokenA, { limit: '3' })).body.data[2]!.id;
        for (const text of [`v1:${some}`, some, JSON.stringify({ id: some })]) {
          await refused(ctx.tokenA, { cursor: Buffer.from(text).toString('base64url') });
          await refused(ctx.tokenA, { cursor: text });
        }
      });

      it("another shop's cursor → 400, and never that shop's events", async () => {
        const b = await list(ctx, ctx.tokenB, { limit: '5' });
        expect(b.status).toBe(200);
        const other = b.body.page.next_cursor!;
        await refused(ctx.tokenA, { cursor: other });
        // And shop B's own listing never shows shop A events (nor A's cursor works there).
        await refused(ctx.tokenB, { cursor });
        const ids = b.body.data.map((e) => e.id);
        const rows = await ctx.db.all<{ shop_id: string }>(
          `SELECT DISTINCT shop_id FROM events WHERE id IN (${ids.map(() => '?').join(', ')})`,
          ids,
        );
        expect(rows.map((r) => r.shop_id)).toEqual([ctx.shopB]);
      });

      it('a newest-first cursor used oldest first → 400', async () => {
        await refused(ctx.tokenA, { cursor, order: 'asc' });
      });
    });
  });
}
