// The reads of issue 42 part B use their indexes (migrations 1710 and 1711), on the suite's store:
// a page of receipts (by shop, endpoint or error code) reads each kind newest first through an
// index, and the events list's resource_id filter reads events_shop_resource (an expression
// index: the query must spell the expression exactly as the migration does). The SQL is captured
// from the read functions themselves, then explained.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../api/src/reads/events.ts';
import { type ReceiptFilter, shopReceiptsPage } from '../../api/src/reads/receipts.ts';
import { resourceIdFilter } from '../../api/src/reads/resource-id.ts';
import type { Db } from '../../api/src/store/db.ts';
import { migrate } from '../../api/src/store/migrate.ts';
import { openStore } from '../../api/src/store/open.ts';
import { freshSqlite } from '../helpers/sqlite.ts';
import { createPgSchema, type PgSchema, testStore } from '../helpers/store.ts';

interface Query {
  sql: string;
  params: unknown[];
}

/** The db, recording each query a read makes (and running it). */
function recording(db: Db, seen: Query[]): Db {
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key === 'all' || key === 'get')
        return (sql: string, params: unknown[] = []) => {
          seen.push({ sql, params });
          return (target[key] as (s: string, p: unknown[]) => Promise<unknown>)(sql, params);
        };
      const v = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

let db: Db;
let schema: PgSchema | null = null;
let explain: (q: Query) => Promise<string>;

beforeAll(async () => {
  if (testStore() === 'sqlite') {
    const s = (await freshSqlite()).db;
    db = s;
    explain = async (q) =>
      (await s.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${q.sql}`, q.params as never[]))
        .map((r) => r.detail)
        .join(' | ');
    return;
  }
  schema = await createPgSchema('plans');
  db = await openStore({ dataDir: '', databaseUrl: schema.url });
  await migrate(db);
  const url = schema.url;
  explain = async (q) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      // Empty tables: make the planner show which index it can use rather than a cheaper scan.
      await c.query('SET enable_seqscan = off');
      let i = 0;
      const res = await c.query(`EXPLAIN ${q.sql.replace(/\?/g, () => `$${++i}`)}`, q.params);
      return res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join(' | ');
    } finally {
      await c.end();
    }
  };
});
afterAll(async () => {
  await db?.close();
  await schema?.drop();
});

async function planOfReceipts(f: ReceiptFilter): Promise<string> {
  const seen: Query[] = [];
  await shopReceiptsPage(recording(db, seen), 'shop_x', f);
  expect(seen).toHaveLength(1);
  return explain(seen[0] as Query);
}

describe('listReceipts reads indexes', () => {
  it("a shop's page reads receipts_shop and events_shop_id", async () => {
    const p = await planOfReceipts({ limit: 51 });
    expect(p).toMatch(/receipts_shop\b/);
    expect(p).toMatch(/events_shop_id/);
  });

  it("an endpoint's page reads receipts_endpoint_id and events_shop_endpoint, from the cursor on", async () => {
    const p = await planOfReceipts({ limit: 51, endpointId: 'ep_x', beforeId: 'rcpt_01jd0000000000000000000000' });
    expect(p).toMatch(/receipts_endpoint_id/);
    expect(p).toMatch(/events_shop_endpoint/);
  });

  it('an error-code page reads receipts_shop_error and no events', async () => {
    const p = await planOfReceipts({ limit: 51, errorCode: 'signature_mismatch' });
    expect(p).toMatch(/receipts_shop_error/);
    expect(p).not.toMatch(/events/);
  });
});

describe('listEvents resource_id reads events_shop_resource', () => {
  for (const value of ['5623452345', 'gid://shopify/Order/5623452345']) {
    it(`resource_id=${value}`, async () => {
      const seen: Query[] = [];
      await listEvents({ db: recording(db, seen), now: () => Date.now() }, 'shop_x', {
        order: 'desc',
        limit: 50,
        resourceId: resourceIdFilter(value),
      });
      const page = seen.find((q) => q.sql.includes('resource_id IS NOT NULL'));
      expect(page).toBeDefined();
      const p = await explain(page as Query);
      expect(p).toMatch(/events_shop_resource/);
      expect(p).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
    });
  }
});
