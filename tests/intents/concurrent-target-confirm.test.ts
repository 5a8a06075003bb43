// Confirmations of different intents on one endpoint, sent together over real HTTP (both stores):
// the target-changed check and the write are one step, so exactly one executes and the others are
// refused (intent_stale, or endpoint_archived once the winner archived it). ADR 0411.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { sendSigned, waitDelivered } from './helpers.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  token = server.sandbox!.grant_token;
});
afterAll(async () => {
  await server?.close();
});

/** One API call over the loopback socket. */
async function http(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as any };
}

const confirmOverHttp = (id: string) =>
  http('POST', `/agent/v1/action-intents/${id}/confirm`, undefined, { 'idempotency-key': randomUUID() });

async function newEndpoint(): Promise<{ id: string; secret: string }> {
  const p = await http('POST', '/agent/v1/endpoints/intents', {
    name: `Race ${randomUUID().slice(0, 8)}`,
    trigger_variant: 'external_event',
    auth_mode: 'hmac_sha256',
  });
  expect(p.status, p.text).toBe(201);
  const done = await confirmOverHttp(p.json.id);
  expect(done.status, done.text).toBe(200);
  return { id: done.json.result.endpoint_id, secret: done.json.result.secret };
}

/** Previews every intent first (all see the same version), then confirms them all at once. */
async function race(previews: { path: string; body: unknown }[]) {
  const ids: string[] = [];
  for (const p of previews) {
    const r = await http('POST', p.path, p.body);
    expect(r.status, r.text).toBe(201);
    ids.push(r.json.id);
  }
  const results = await Promise.all(ids.map(confirmOverHttp));
  const won = results.filter((r) => r.status === 200);
  expect(results.map((r) => `${r.status} ${r.json.code ?? r.json.state}`).sort()).toHaveLength(previews.length);
  expect(won, results.map((r) => `${r.status} ${r.json.code ?? r.json.state}`).join(', ')).toHaveLength(1);
  for (const r of results.filter((x) => x.status !== 200)) {
    expect(r.status, r.text).toBe(409);
    expect(['intent_stale', 'endpoint_archived']).toContain(r.json.code);
  }
  return won[0]!.json;
}

async function configVersion(id: string): Promise<number> {
  const r = await http('GET', `/agent/v1/endpoints/${id}`);
  expect(r.status, r.text).toBe(200);
  return Number(r.json.config_version);
}

it('four edits previewed at one version, confirmed together: one executes, the version moves by one', async () => {
  const ep = await newEndpoint();
  const before = await configVersion(ep.id);
  await race(
    [1, 2, 3, 4].map((n) => ({ path: `/agent/v1/endpoints/${ep.id}/edit-intents`, body: { name: `Edited ${n}` } })),
  );
  expect(await configVersion(ep.id)).toBe(before + 1);
}, 120_000);

it('three rotations confirmed together: one executes and the secret it hands out works for intake', async () => {
  const ep = await newEndpoint();
  const won = await race(
    [1, 2, 3].map(() => ({ path: `/agent/v1/endpoints/${ep.id}/rotate-secret-intents`, body: { overlap_hours: 0 } })),
  );
  const accepted = await sendSigned(server, ep.id, won.result.secret, { type: 'after-race' });
  expect(accepted.status, JSON.stringify(accepted.json)).toBe(202);
  expect((await sendSigned(server, ep.id, ep.secret, { type: 'old-secret' })).status).toBe(401);
}, 120_000);

it('archive, edit and rotate confirmed together: exactly one executes, never an archived endpoint edited', async () => {
  const ep = await newEndpoint();
  const before = await configVersion(ep.id);
  await race([
    { path: `/agent/v1/endpoints/${ep.id}/delete-intents`, body: { mode: 'archive' } },
    { path: `/agent/v1/endpoints/${ep.id}/edit-intents`, body: { name: 'Edited while archiving' } },
    { path: `/agent/v1/endpoints/${ep.id}/rotate-secret-intents`, body: { overlap_hours: 0 } },
  ]);
  const row = await http('GET', `/agent/v1/endpoints/${ep.id}`);
  const archived = row.json.status === 'archived';
  // Archive won: nothing else changed. Edit or rotation won: it is not archived.
  expect(Number(row.json.config_version)).toBe(archived ? before : before + 1);
  if (archived) expect(row.json.name).not.toBe('Edited while archiving');
}, 120_000);

it("a replay and the archive of its event's endpoint confirmed together: the replay runs before the archive or not at all", async () => {
  const ep = await newEndpoint();
  const sent = await sendSigned(server, ep.id, ep.secret, { type: 'to-replay', id: randomUUID() });
  expect(sent.status).toBe(202);
  await waitDelivered(server, sent.json.event_id);
  const replay = await http('POST', `/agent/v1/events/${sent.json.event_id}/replay-intents`, {
    acknowledge_recent_delivery: true,
  });
  const archive = await http('POST', `/agent/v1/endpoints/${ep.id}/delete-intents`, { mode: 'archive' });
  expect(replay.status, replay.text).toBe(201);
  expect(archive.status, archive.text).toBe(201);
  const [r, a] = await Promise.all([confirmOverHttp(replay.json.id), confirmOverHttp(archive.json.id)]);
  expect(a.status, a.text).toBe(200);
  if (r.status !== 200) {
    expect(r.status, r.text).toBe(409);
    expect(r.json.code).toBe('endpoint_archived');
  } else {
    // Both ran: then one after the other, the replay first (a replay is never confirmed against an
    // endpoint being archived at that moment).
    expect(Date.parse(r.json.finished_at)).toBeLessThanOrEqual(Date.parse(a.json.confirmed_at));
  }
}, 120_000);
