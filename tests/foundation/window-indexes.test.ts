// Migration 1760: the reads by a shop's recent window (endpoint reads, setup, diagnostics) read the
// window's index entries only, on a real SQLite file: covering index, never the events table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_STATE_COUNTS_SQL } from '../../api/src/reads/endpoints.ts';
import { senderOutcomesSql } from '../../api/src/reads/readiness.ts';
import { LAST_EVENT_SQL } from '../../api/src/reads/setup.ts';
import { EVENT_COUNTS_SQL } from '../../api/src/store/tables/events/counts.ts';
import { windowParams } from '../../api/src/store/tables/events/window-counts.ts';
import type { SqliteDb } from '../../api/src/store/sqlite.ts';
import { freshSqlite, queryPlan } from '../helpers/sqlite.ts';

describe('window reads on SQLite (migration 1760)', () => {
  let db: SqliteDb;
  beforeAll(async () => {
    db = (await freshSqlite()).db;
  });
  afterAll(async () => {
    await db?.close();
  });

  const plan = (sql: string, params: unknown[]) => queryPlan(db, sql, params);

  // The window's whole hours are a primary-key range of event_window_counts, its first part-hour a
  // range of events_shop_received (ADR 0313): never the events table.
  const WINDOW_PLAN = [
    'SEARCH event_window_counts USING INDEX sqlite_autoindex_event_window_counts_1 (shop_id=? AND hour>?)',
    'SEARCH events USING COVERING INDEX events_shop_received (shop_id=? AND received_at>? AND received_at<?)',
  ];
  const windowLines = (p: string) => p.split(' | ').filter((l) => / (events|event_window_counts)\b/.test(l));

  it("the endpoints' counts by state read the window's hourly counts and its first part-hour's index entries", async () => {
    const p = await plan(ENDPOINT_STATE_COUNTS_SQL, windowParams('shop', 0));
    expect(windowLines(p)).toEqual(WINDOW_PLAN);
    expect(p).not.toMatch(/SCAN events/);
  });

  it("setup's recent deliveries (the shop's and one endpoint's) read the window's counts and part-hour alone", async () => {
    for (const endpoint of [undefined, 'ep']) {
      const p = await plan(senderOutcomesSql(endpoint !== undefined), windowParams('shop', 0, endpoint));
      expect(windowLines(p)).toEqual(WINDOW_PLAN);
      expect(p).not.toMatch(/SCAN events/);
    }
  });

  it("plan usage's event counts are the period's rows of event_counts' primary key, never events (ADR 0312)", async () => {
    const p = await plan(EVENT_COUNTS_SQL, ['shop', '2026-11']);
    expect(p).toMatch(/^SEARCH event_counts USING INDEX sqlite_autoindex_event_counts_1 \(shop_id=\? AND period=\?\)$/);
  });

  it("setup's last received and last delivered times are one index entry each", async () => {
    const p = await plan(LAST_EVENT_SQL, ['shop', 'shop']);
    expect(p).toMatch(/SEARCH events USING COVERING INDEX events_shop_received \(shop_id=\?\)/);
    expect(p).toMatch(/SEARCH events USING COVERING INDEX events_shop_delivered \(shop_id=\? AND delivered_at>\?\)/);
    expect(p).not.toMatch(/SCAN events/);
  });

  it("a receipts page's derived part still walks events_shop_id newest first, not the new window index", async () => {
    // The shape shopReceiptsPage reads intake's receipts with (reads/receipts.ts): a page is the
    // first rows of the shop in id order, so no sort and no window index (without statistics, as
    // a store runs; ANALYZE's statistics choose the same).
    const p = await plan(
      'SELECT id FROM events WHERE request_id IS NOT NULL AND shop_id = ? ORDER BY events.id DESC LIMIT ?',
      ['shop', 51],
    );
    expect(p).toBe('SEARCH events USING INDEX events_shop_id (shop_id=?)');
  });

  it('events_shop_received serves only a query that states a received_at condition (partial)', async () => {
    // SQLite with ANALYZE statistics scanned the whole table for the replay_available list once
    // this index's columns were there to tempt it (2.2 s at 1M events); a query without a
    // received_at condition cannot use it at all.
    const forced = (where: string) =>
      plan(`SELECT endpoint_id, state FROM events INDEXED BY events_shop_received WHERE shop_id = ?${where}`, ['s']);
    await expect(forced('')).rejects.toThrow(/no query solution/);
    expect(await forced(' AND received_at >= 0')).toMatch(/events_shop_received/);
  });
});
