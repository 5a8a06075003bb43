// The same engine on PostgreSQL (scale-out store): exactly-once confirmation
// under concurrency (one key, and many keys on one intent), and a replay end to end.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../api/src/ids.ts';
import { sha256Hex } from '../../api/src/lib/crypto.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, deliveredEvent, triggerFor, waitDelivered } from './helpers.ts';

const PG_URL = process.env.FLOWPORT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `int_${newId('request').slice(4, 20)}`;
let admin: pg.Client;
let server: TestServer;
let token: string;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  server = await startTestServer({ env: { FLOWPORT_DATABASE_URL: `${PG_URL}?options=-c%20search_path%3D${schema}` } });
  token = server.sandbox!.grant_token;
});
afterAll(async () => {
  await server?.close();
  await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin?.end();
});

const preview = () =>
  api(server, token, 'POST', `/agent/v1/endpoints/${server.sandbox!.endpoint_id}/test-event-intents`, {
    payload: { type: 'pg', n: randomUUID() },
  });

it('one key, 20 concurrent confirmations: one execution, stored response or 409 for the rest', async () => {
  const p = await preview();
  expect(p.status).toBe(201);
  const key = randomUUID();
  const results = await Promise.all(Array.from({ length: 20 }, () => confirm(server, token, p.json.id, key)));
  const ok = results.filter((r) => r.status === 200);
  expect(ok.length + results.filter((r) => r.status === 409).length).toBe(20);
  for (const r of ok) expect(r.text).toBe(ok[0]?.text);
  // One event carries the preview's unique payload: the one the stored response names.
  const rows = await server.runtime.services.db.all<{ id: string }>('SELECT id FROM events WHERE body_sha256 = ?', [
    sha256Hex(JSON.stringify(p.json.parameters.payload)),
  ]);
  expect(rows.map((r) => r.id)).toEqual([ok[0]?.json.result.event_id]);
}, 180_000);

it('20 different keys on one intent: exactly one executes, the others are refused as not confirmable', async () => {
  const p = await preview();
  const results = await Promise.all(Array.from({ length: 20 }, () => confirm(server, token, p.json.id)));
  expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  for (const r of results.filter((x) => x.status !== 200)) expect(r.json.code).toBe('intent_not_confirmable');
}, 180_000);

it('a replay runs end to end on Postgres', async () => {
  const original = await deliveredEvent(server);
  const p = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
    acknowledge_recent_delivery: true,
  });
  expect(p.status).toBe(201);
  const done = await confirm(server, token, p.json.id);
  expect(done.status).toBe(200);
  await waitDelivered(server, done.json.result.event_id);
  await triggerFor(server, server.sandbox!.shop_domain, done.json.result.event_id);
}, 120_000);
