// Migration 0700's, 0800's, 1500's and 1520's indexes on events (and 1790's dedupe_keys): the facts they repeat as SQL literals agree
// with the code, and on a real SQLite file the queries they serve use them (ADR 0304).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTAKE_SUPPORT_CODES } from '../../api/src/errors/codes/intake.ts';
import { STORED_TERMINAL_STATES } from '../../api/src/handoff/outcomes.ts';
import { REPLAYS_OF_SQL } from '../../api/src/reads/events.ts';
import type { SqliteDb } from '../../api/src/store/sqlite.ts';
import {
  dueRowsSql,
  dueShopsSql,
  firstLookSql,
  retentionCandidates,
} from '../../api/src/store/tables/events/deliver.ts';
import { freshSqlite, queryPlan } from '../helpers/sqlite.ts';

const MIGRATION = readFileSync(
  join(import.meta.dirname, '../../api/src/store/migrations/0700_intake_rows.sql'),
  'utf8',
);

describe('migration 0700 literals', () => {
  it('leaves out the accepted support code by its own value', () => {
    expect(/WHERE support_code <> '([^']+)'/.exec(MIGRATION)?.[1]).toBe(INTAKE_SUPPORT_CODES.accepted.code);
  });

  it('indexes retained bodies of exactly the terminal states', () => {
    const list = /state IN \(([^)]+)\)/.exec(MIGRATION)?.[1];
    expect(list?.split(',').map((s) => s.trim().replace(/'/g, ''))).toEqual([...STORED_TERMINAL_STATES]);
  });
});

describe('query plans on SQLite', () => {
  let db: SqliteDb;
  beforeAll(async () => {
    db = (await freshSqlite()).db;
  });
  afterAll(async () => {
    await db?.close();
  });

  const plan = (sql: string, params: unknown[]) => queryPlan(db, sql, params);

  it('the retention sweep reads events_retention', async () => {
    expect(
      await plan(
        `SELECT e.id FROM events e JOIN shops s ON s.id = e.shop_id
          WHERE ${retentionCandidates(STORED_TERMINAL_STATES)} AND e.received_at <= ? AND s.plan = ? LIMIT 500`,
        [1, 'free'],
      ),
    ).toMatch(/USING INDEX events_retention/);
  });

  it("dedupe reads a key's holder by dedupe_keys' primary key (migration 1790)", async () => {
    expect(
      await plan('SELECT event_id FROM dedupe_keys WHERE endpoint_id = ? AND external_event_id = ?', ['ep', 'x']),
    ).toMatch(/SEARCH dedupe_keys USING PRIMARY KEY \(endpoint_id=\? AND external_event_id=\?\)/);
  });

  it("an event's replays (timeline, replay preview and confirmation) read events_replays, never a scan", async () => {
    expect(await plan(REPLAYS_OF_SQL, ['shop', 'evt'])).toMatch(/USING (COVERING )?INDEX events_replays/);
  });

  it('a support-code filter other than the accepted code reads events_shop_support', async () => {
    const accepted = INTAKE_SUPPORT_CODES.accepted.code;
    expect(
      await plan(
        `SELECT id FROM events e WHERE e.shop_id = ? AND e.support_code = ? AND e.support_code <> '${accepted}'`,
        ['s', 'HO-404'],
      ),
    ).toMatch(/USING INDEX events_shop_support/);
  });
  it('an event-type filter of the events list reads events_shop_type in id order (migration 1500)', async () => {
    const p = await plan(
      `SELECT e.id FROM events e JOIN endpoints ep ON ep.id = e.endpoint_id
        WHERE e.shop_id = ? AND e.event_type = ? ORDER BY e.id DESC LIMIT 51`,
      ['s', 'order.created'],
    );
    expect(p).toMatch(/USING (COVERING )?INDEX events_shop_type/);
    expect(p).not.toMatch(/TEMP B-TREE/);
  });

  it("the claim's look reads events_due in due order, then shop by shop from events_queued (migration 1520)", async () => {
    const first = await plan(firstLookSql('sqlite'), [1, 320, 2, 320]);
    expect(first).toMatch(/SEARCH events USING INDEX events_due \(next_attempt_at<\?\)/);
    expect(first).toMatch(/USING INDEX events_leased/);
    expect(first).not.toMatch(/TEMP B-TREE FOR ORDER BY \| SCAN q/);
    const shops = await plan(dueShopsSql(64), [1, 1]);
    // Every read of events in it is an index search; none walks the table or sorts.
    expect(
      shops.match(/(SCAN|SEARCH) (e|events) [^|]*/g)?.every((d) => /USING COVERING INDEX events_queued/.test(d)),
    ).toBe(true);
    expect(shops).toMatch(/SEARCH e USING COVERING INDEX events_queued \(shop_id>\?\)/);
    expect(shops).toMatch(/SEARCH e USING COVERING INDEX events_queued \(shop_id=\? AND next_attempt_at<\?\)/);
    const rows = await plan(dueRowsSql('sqlite', 2), ['a', 1, 3, 'b', 1, 3]);
    expect(rows.match(/SEARCH events USING INDEX events_queued \(shop_id=\? AND next_attempt_at<\?\)/g)).toHaveLength(
      2,
    );
    expect(rows).not.toMatch(/TEMP B-TREE/);
  });

  it("a shop's live leases are counted from events_leased", async () => {
    expect(
      await plan(
        `SELECT COUNT(*) FROM events e WHERE e.shop_id = ? AND e.state = 'delivering' AND e.lease_expires_at >= ?`,
        ['s', 1],
      ),
    ).toMatch(/USING COVERING INDEX events_leased \(shop_id=\? AND lease_expires_at>\?\)/);
  });

  it('a state filter of the events list reads events_shop_state in id order, no sort', async () => {
    const p = await plan(
      `SELECT e.id FROM events e JOIN endpoints ep ON ep.id = e.endpoint_id
        WHERE e.shop_id = ? AND e.state = ? ORDER BY e.id DESC LIMIT 51`,
      ['s', 'failed'],
    );
    expect(p).toMatch(/USING (COVERING )?INDEX events_shop_state/);
    expect(p).not.toMatch(/TEMP B-TREE/);
  });
});
