// The retention sweep purges an event's body while a replay of it is being
// confirmed (Postgres, read committed: the confirmation checked the body, then
// the sweep committed, then the replay copied the row). The replay must not be
// created without a body: it would hand Flow an empty "Body" as a replay.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { PG_AUDIT_LOCK } from '../../api/src/audit/log.ts';
import { PostgresDb } from '../../api/src/store/postgres.ts';
import { createPgSchema, type PgSchema } from '../helpers/store.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, deliveredEvent } from '../intents/helpers.ts';
import { waitFor } from './helpers.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

let schema: PgSchema;
let server: TestServer;
let db: PostgresDb;
beforeAll(async () => {
  schema = await createPgSchema('purgerace');
  server = await startTestServer({ env: { FLOWPORT_DATABASE_URL: schema.url } });
  db = await PostgresDb.connect(schema.url, { poolSize: 3 });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
  await schema?.drop();
});

it('a body purged between the replay check and the copy: the confirmation is refused, no empty replay is queued', async () => {
  const token = server.sandbox!.grant_token;
  const original = await deliveredEvent(server);
  const preview = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
    acknowledge_recent_delivery: true,
  });
  expect(preview.status).toBe(201);

  // Hold the audit log's lock: the confirmation checks the event, then waits at its audit entry.
  let confirmation: ReturnType<typeof confirm> | null = null;
  await db.tx(async (tx) => {
    await tx.get('SELECT pg_advisory_xact_lock(?)', [PG_AUDIT_LOCK]);
    confirmation = confirm(server, token, preview.json.id);
    await waitFor(async () => {
      const r = await db.get<{ n: number }>(
        `SELECT COUNT(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
      );
      return Number(r?.n) > 0;
    }, 'the confirmation waiting at its audit entry');
    // Meanwhile the sweep purges the original's body (committed on its own connection).
    await db.run(`UPDATE events SET body = NULL, retention_state = 'expired' WHERE id = ?`, [original]);
  });
  const done = await (confirmation as unknown as ReturnType<typeof confirm>);
  const replays = await db.all<{ id: string; body: string | null }>('SELECT id, body FROM events WHERE replay_of = ?', [
    original,
  ]);
  expect(replays.filter((r) => r.body === null)).toEqual([]);
  expect(done.status).toBe(410);
  expect(done.json.code).toBe('retention_expired');
});
