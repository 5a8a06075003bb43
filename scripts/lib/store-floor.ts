// bench:floor's store alone (issue 45, item 3): what intake's store work per accepted event costs
// with the driver alone — better-sqlite3 or pg, no HTTP and no Flowport code on the timed path.
// Per batch, as intake's group commit does for one endpoint and shop (intake.ts, batch.ts,
// dedupe.ts): BEGIN; the dedupe claims of the batch's external ids (ADR 0314); the shop's accepted_events
// read; the batch's event rows (one prepared INSERT per row on SQLite, one array per column on
// PostgreSQL); the meter's upsert; plan usage's event count's upsert (ADR 0312); the 24-hour window's count's upsert (ADR 0313); COMMIT. An accepted event writes one row (its receipt lives in
// the event row, ADR 0304) into `events` with its indexes. The schema, shop and endpoint are made
// by Flowport's migrations and services before timing starts; rows and bodies are built before
// each batch's clock starts. SQLite: WAL, synchronous NORMAL (no fsync at COMMIT; Flowport syncs
// its WAL off the event loop, ADR 0302), checkpoints in the connection (SQLite's automatic ones).
// PostgreSQL: the client's CPU and its backend's (/proc), each per event.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../../api/src/config.ts';
import { SecretBox } from '../../api/src/lib/crypto.ts';
import { newId } from '../../api/src/ids.ts';
import { DEFAULT_HMAC, insertEndpoint } from '../../api/src/services/endpoints.ts';
import { createShop } from '../../api/src/services/shops.ts';
import type { Db } from '../../api/src/store/db.ts';
import { migrate } from '../../api/src/store/migrate.ts';
import { PostgresDb } from '../../api/src/store/postgres.ts';
import { SqliteDb } from '../../api/src/store/sqlite.ts';
import { EVENT_COLUMNS } from '../../api/src/store/tables/events/accept.ts';
import {
  COLUMNS as DEDUPE_COLUMNS,
  ON_CONFLICT as DEDUPE_UPSERT,
} from '../../api/src/store/tables/events/dedupe-keys.ts';
import { createPgSchema, type PgSchema } from '../../tests/helpers/store.ts';
import type { BenchStore } from './bench-flowport.ts';
import { processCpuSeconds } from './proc-cpu.ts';

/** One batch size's figures over one round. */
export interface FloorRound {
  /** µs of this process's CPU per event (the driver, its native code, SQLite itself). */
  client: number;
  /** µs of the PostgreSQL backend's CPU per event (null on SQLite). */
  server: number | null;
}

interface Target {
  shopId: string;
  endpointId: string;
}

/** A shop and an endpoint made by Flowport's own services on a migrated store (not timed). */
async function prepare(db: Db, dataDir: string): Promise<Target> {
  await migrate(db);
  const services = {
    db,
    secrets: SecretBox.fromString(randomBytes(32).toString('base64url')),
    now: Date.now,
    config: loadConfig({ FLOWPORT_DATA_DIR: dataDir, FLOWPORT_LOG_LEVEL: 'silent' }),
  };
  const shop = await createShop(services, { domain: `floor-${randomBytes(4).toString('hex')}.myshopify.com` });
  const ep = await insertEndpoint(
    services,
    shop.id,
    {
      name: 'floor',
      senderLabel: 'floor',
      triggerVariant: 'external_event',
      authMode: 'hmac_sha256',
      hmac: DEFAULT_HMAC,
      mapping: {
        resourceIdPath: null,
        relatedResourceIdPath: null,
        requiredPaths: [],
        externalId: { kind: 'json', path: 'id' },
        eventTypePath: 'type',
      },
    },
    `fpsec_${randomBytes(16).toString('hex')}`,
  );
  return { shopId: shop.id, endpointId: ep.id };
}

let seq = 0;
/** A batch's event rows in EVENT_COLUMNS order, as intake builds them for accepted ~1 KiB events. */
function rows(t: Target, n: number, bodyAs: 'bytes' | 'string'): { rows: unknown[][]; ext: string[] } {
  const now = Date.now();
  const out: unknown[][] = [];
  const ext: string[] = [];
  const pad = 'x'.repeat(900);
  for (let i = 0; i < n; i++) {
    const id = `floor_${process.pid}_${seq++}`;
    const body = `{"type":"order.paid","id":"${id}","order_id":${1000 + i},"total":"42.00","note":"${pad}"}`;
    const eventId = newId('event', now);
    ext.push(id);
    const values: Record<(typeof EVENT_COLUMNS)[number], unknown> = {
      id: eventId,
      shop_id: t.shopId,
      endpoint_id: t.endpointId,
      receipt_id: newId('receipt', now),
      request_id: `req_${randomBytes(8).toString('hex')}`,
      state: 'queued',
      support_code: 'FP-I-OK',
      external_event_id: id,
      event_type: 'order.paid',
      sender: 'floor',
      body: bodyAs === 'bytes' ? Buffer.from(body) : body,
      body_size: body.length,
      body_sha256: createHash('sha256').update(body).digest('hex'),
      resource_id: null,
      related_resource_id: null,
      config_version: 1,
      received_at: now,
      updated_at: now,
      next_attempt_at: now,
      body_expires_at: now + 30 * 86_400_000,
      retention_state: 'retained',
      duplicate_of: null,
    };
    out.push(EVENT_COLUMNS.map((c) => values[c]));
  }
  return { rows: out, ext };
}

const period = () => new Date().toISOString().slice(0, 7);
const hour = () => Math.floor(Date.now() / 3_600_000);
const DEDUPE_WINDOW_MS = 24 * 3_600_000;

/**
 * The SQLite floor: a migrated file written by better-sqlite3 alone. `durable`: as durable as
 * Flowport's answer promises (an accepted event is on disk before its 202), the way SQLite does it
 * by itself: `synchronous = FULL`, the WAL fsynced at each COMMIT. Without it: NORMAL, no fsync at
 * COMMIT (the floor issue 45 first measured). Both checkpoint in the connection (SQLite's automatic
 * checkpoints, every 1,000 pages, in the COMMIT that crosses it; a checkpoint syncs).
 */
export class SqliteFloor {
  private readonly dir = mkdtempSync(join(tmpdir(), 'flowport-floor-store-'));
  private raw!: Database.Database;
  private t!: Target;

  private readonly durable: boolean;

  constructor(durable = false) {
    this.durable = durable;
  }

  async open(): Promise<void> {
    const file = join(this.dir, 'flowport.db');
    const db = new SqliteDb(file);
    this.t = await prepare(db, this.dir);
    await db.close();
    this.raw = new Database(file);
    this.raw.pragma('journal_mode = WAL');
    this.raw.pragma(this.durable ? 'synchronous = FULL' : 'synchronous = NORMAL');
    this.raw.pragma('foreign_keys = ON');
  }

  /** `events` accepted events in batches of `batch`; CPU per event. */
  round(batch: number, events: number): FloorRound {
    const placeholders = EVENT_COLUMNS.map((c) => (c === 'body' ? 'CAST(? AS TEXT)' : '?')).join(', ');
    const insert = this.raw.prepare(`INSERT INTO events (${EVENT_COLUMNS.join(', ')}) VALUES (${placeholders})`);
    const readUsage = this.raw.prepare(
      "SELECT count FROM usage_counters WHERE shop_id = ? AND period = ? AND meter = 'accepted_events'",
    );
    const addUsage = this.raw.prepare(
      `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'accepted_events', ?)
       ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + excluded.count`,
    );
    const addCount = this.raw.prepare(
      `INSERT INTO event_counts (shop_id, period, kind, count) VALUES (?, ?, 'sender', ?)
       ON CONFLICT (shop_id, period, kind) DO UPDATE SET count = event_counts.count + excluded.count`,
    );
    const addWindow = this.raw.prepare(
      `INSERT INTO event_window_counts (shop_id, hour, endpoint_id, kind, state, support_code, recovered, count)
       VALUES (?, ?, ?, 'sender', 'queued', 'FP-I-OK', 0, ?)
       ON CONFLICT (shop_id, hour, endpoint_id, kind, state, support_code, recovered) DO UPDATE SET count = event_window_counts.count + excluded.count`,
    );
    const claim = this.raw.prepare(
      `INSERT INTO dedupe_keys (${DEDUPE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ${DEDUPE_UPSERT}`,
    );
    let cpu = 0;
    for (let done = 0; done < events; done += batch) {
      const b = rows(this.t, batch, 'bytes');
      const now = Date.now();
      const t0 = process.cpuUsage();
      this.raw.exec('BEGIN IMMEDIATE');
      // Dedupe: each copy claims its external id (ADR 0314); a new id always wins.
      for (let i = 0; i < b.ext.length; i++)
        claim.get(this.t.endpointId, b.ext[i], this.t.shopId, b.rows[i]?.[0], now, DEDUPE_WINDOW_MS);
      readUsage.get(this.t.shopId, period());
      for (const r of b.rows) insert.run(...(r as unknown[]));
      addUsage.run(this.t.shopId, period(), batch);
      addCount.run(this.t.shopId, period(), batch);
      addWindow.run(this.t.shopId, hour(), this.t.endpointId, batch);
      this.raw.exec('COMMIT');
      const d = process.cpuUsage(t0);
      cpu += d.user + d.system;
    }
    return { client: cpu / events, server: null };
  }

  close(): void {
    this.raw?.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The PostgreSQL floor: a migrated schema written by one pg client alone. */
export class PostgresFloor {
  private schema!: PgSchema;
  private client!: pg.Client;
  private backendPid = 0;
  private t!: Target;
  private types: string[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'flowport-floor-store-'));

  async open(): Promise<void> {
    this.schema = await createPgSchema('floor');
    const db = await PostgresDb.connect(this.schema.url, { poolSize: 1 });
    this.t = await prepare(db, this.dir);
    const cols = await db.all<{ column_name: string; udt_name: string }>(
      "SELECT column_name, udt_name FROM information_schema.columns WHERE table_name = 'events' AND table_schema = current_schema()",
    );
    const typeOf = new Map(cols.map((c) => [c.column_name, c.udt_name]));
    this.types = EVENT_COLUMNS.map((c) => typeOf.get(c) as string);
    await db.close();
    this.client = new pg.Client({ connectionString: this.schema.url });
    await this.client.connect();
    this.backendPid = Number((await this.client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  }

  /** `events` accepted events in batches of `batch`; CPU per event, client and backend. */
  async round(batch: number, events: number): Promise<FloorRound> {
    const c = this.client;
    const arrays = this.types.map((t, i) => `$${i + 1}::${t}[]`).join(', ');
    let client = 0;
    // The backend works only for this client: its CPU over the round (/proc counts in ticks).
    const s0 = processCpuSeconds(this.backendPid) ?? 0;
    for (let done = 0; done < events; done += batch) {
      const b = rows(this.t, batch, 'string');
      const cols = EVENT_COLUMNS.map((_, i) => b.rows.map((r) => r[i]));
      const t0 = process.cpuUsage();
      await c.query('BEGIN');
      // Dedupe: the batch claims its external ids in one upsert (ADR 0314); new ids always win.
      const n = b.ext.length;
      await c.query({
        name: 'floor_dedupe',
        text: `INSERT INTO dedupe_keys (${DEDUPE_COLUMNS})
               SELECT ${DEDUPE_COLUMNS} FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])
                 AS c(${DEDUPE_COLUMNS})
               ${DEDUPE_UPSERT}`,
        values: [
          Array(n).fill(this.t.endpointId),
          b.ext,
          Array(n).fill(this.t.shopId),
          b.rows.map((r) => r[0]),
          Array(n).fill(Date.now()),
          Array(n).fill(DEDUPE_WINDOW_MS),
        ],
      });
      await c.query({
        name: 'floor_usage',
        text: "SELECT count FROM usage_counters WHERE shop_id = $1 AND period = $2 AND meter = 'accepted_events'",
        values: [this.t.shopId, period()],
      });
      await c.query({
        name: 'floor_insert',
        text: `INSERT INTO events (${EVENT_COLUMNS.join(', ')}) SELECT * FROM unnest(${arrays})`,
        values: cols,
      });
      await c.query({
        name: 'floor_add',
        text: `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES ($1, $2, 'accepted_events', $3)
               ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + excluded.count`,
        values: [this.t.shopId, period(), batch],
      });
      await c.query({
        name: 'floor_count',
        text: `INSERT INTO event_counts (shop_id, period, kind, count) VALUES ($1, $2, 'sender', $3)
               ON CONFLICT (shop_id, period, kind) DO UPDATE SET count = event_counts.count + excluded.count`,
        values: [this.t.shopId, period(), batch],
      });
      await c.query({
        name: 'floor_window',
        text: `INSERT INTO event_window_counts (shop_id, hour, endpoint_id, kind, state, support_code, recovered, count)
               VALUES ($1, $2, $3, 'sender', 'queued', 'FP-I-OK', 0, $4)
               ON CONFLICT (shop_id, hour, endpoint_id, kind, state, support_code, recovered)
               DO UPDATE SET count = event_window_counts.count + excluded.count`,
        values: [this.t.shopId, hour(), this.t.endpointId, batch],
      });
      await c.query('COMMIT');
      const d = process.cpuUsage(t0);
      client += d.user + d.system;
    }
    const server = ((processCpuSeconds(this.backendPid) ?? 0) - s0) * 1e6;
    return { client: client / events, server: server / events };
  }

  async close(): Promise<void> {
    await this.client?.end().catch(() => {});
    await this.schema?.drop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One floor measured per round: a batch size, and on SQLite whether COMMIT fsyncs. */
export interface FloorKind {
  batch: number;
  /** SQLite: `synchronous = FULL` (see SqliteFloor). PostgreSQL's floor is always durable (its COMMIT waits for the WAL flush). */
  durable: boolean;
  label: string;
}

/** The floors of a store kind, each measured every round. */
export async function openFloor(
  store: BenchStore,
  batches: readonly number[],
): Promise<{
  kinds: FloorKind[];
  round: (kind: FloorKind, events: number) => Promise<FloorRound>;
  close: () => Promise<void>;
}> {
  if (store === 'sqlite') {
    const fast = new SqliteFloor(false);
    const durable = new SqliteFloor(true);
    await fast.open();
    await durable.open();
    const kinds = [false, true].flatMap((d) =>
      batches.map((batch) => ({
        batch,
        durable: d,
        label: `batches of ${String(batch).padStart(2)}${d ? ', fsync at COMMIT' : ', no fsync at COMMIT'}`,
      })),
    );
    return {
      kinds,
      round: async (k, n) => (k.durable ? durable : fast).round(k.batch, n),
      close: async () => {
        fast.close();
        durable.close();
      },
    };
  }
  const f = new PostgresFloor();
  await f.open();
  return {
    kinds: batches.map((batch) => ({ batch, durable: true, label: `batches of ${String(batch).padStart(2)}` })),
    round: (k, n) => f.round(k.batch, n),
    close: () => f.close(),
  };
}
