// A replay shares its original's body retention: replaying an event a few hours
// before its body is due to be purged must not keep that body for another full
// retention period (the replay's body_expires_at says the original's time).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { bodyRetentionMs, sweepRetention } from '../../api/src/handoff/lifecycle.ts';
import { STORED_TERMINAL_STATES } from '../../api/src/handoff/outcomes.ts';
import { replayRetentionCandidates } from '../../api/src/store/tables/events/deliver.ts';
import { freshSqlite } from '../helpers/sqlite.ts';
import { api, confirm, deliveredEvent, waitDelivered } from '../intents/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { eventRow } from './helpers.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const HOUR = 3_600_000;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

it("a replay's body is purged when its original's retention ends, not a full period after the replay", async () => {
  const services = server.runtime.services;
  const token = server.sandbox!.grant_token;
  const original = await deliveredEvent(server);
  const shop = await services.db.get<{ plan: string }>('SELECT plan FROM shops WHERE id = ?', [
    server.sandbox!.shop_id,
  ]);
  const retention = bodyRetentionMs(services.config, shop!.plan);
  // The original arrived long ago: its body is due to be purged in an hour.
  const receivedAt = services.now() - retention + HOUR;
  await services.db.run('UPDATE events SET received_at = ?, body_expires_at = ? WHERE id = ?', [
    receivedAt,
    receivedAt + retention,
    original,
  ]);

  const preview = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
    acknowledge_recent_delivery: true,
  });
  expect(preview.status).toBe(201);
  const done = await confirm(server, token, preview.json.id);
  expect(done.json.state).toBe('executed');
  const replay = done.json.result.event_id as string;
  await waitDelivered(server, replay);
  const shown = await api(server, token, 'GET', `/agent/v1/events/${replay}`);
  expect(Date.parse(shown.json.retention.body_expires_at)).toBe(receivedAt + retention);

  // Two hours later, past the expiry both events show.
  await sweepRetention({ ...services, now: () => Date.now() + 2 * HOUR });
  expect(await eventRow(services, original)).toMatchObject({ retention_state: 'expired', body: null });
  expect(await eventRow(services, replay)).toMatchObject({ retention_state: 'expired', body: null });
});

it("the replay sweep is indexed; events_replay_retention's state list is STORED_TERMINAL_STATES (the terminal states and the retired 'rejected')", async () => {
  const migration = readFileSync(
    join(import.meta.dirname, '../../api/src/store/migrations/0810_replay_retention.sql'),
    'utf8',
  );
  const list = /state IN \(([^)]+)\)/.exec(migration)?.[1];
  expect(list?.split(',').map((x) => x.trim().replace(/'/g, ''))).toEqual([...STORED_TERMINAL_STATES]);
  const { db } = await freshSqlite();
  try {
    const plan = await db.all<{ detail: string }>(
      `EXPLAIN QUERY PLAN SELECT e.id FROM events e WHERE ${replayRetentionCandidates(STORED_TERMINAL_STATES)} AND e.body_expires_at <= ? LIMIT 500`,
      [1],
    );
    // Indexed, never a scan of every event (which partial index wins depends on the table's statistics).
    expect(plan.map((r) => r.detail).join(' | ')).toMatch(/^SEARCH e USING INDEX events_(replay_)?retention/);
  } finally {
    await db.close();
  }
});
