// One list shape (issue 42 item 6, ADR 0013): every list operation of the registry answers
// `{ data, page: { next_cursor, has_more, limit } }`, takes `cursor` and `limit` (one Limit schema:
// 1–200, default 50), pages exactly (each item once), and refuses a garbled cursor or another
// list's cursor with `invalid_request`. Real HTTP through the app on the suite's store.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { newId } from '../../api/src/ids.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { Cursor, Limit } from '../../api/src/operations/read-schemas.ts';
import { DEFAULT_HMAC, insertEndpoint, PLAIN_MAPPING } from '../../api/src/services/endpoints.ts';
import { insertAlertSubscription, openAlertIncident } from '../../api/src/store/tables/alerts.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, sendSigned } from '../intents/helpers.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const N = 7;
let s: TestServer;
let token: string;
let bulkIntent = '';

/** Each list operation: its path, and what identifies one of its items. */
const LISTS: Record<string, { path: () => string; key: (item: any) => string }> = {
  listEvents: { path: () => '/agent/v1/events', key: (i) => i.id },
  listAudit: { path: () => '/agent/v1/audit', key: (i) => i.id },
  listEndpoints: { path: () => '/agent/v1/endpoints', key: (i) => i.id },
  listActionIntents: { path: () => '/agent/v1/action-intents', key: (i) => i.id },
  listBulkReplayItems: { path: () => `/agent/v1/action-intents/${bulkIntent}/items`, key: (i) => i.event_id },
  listIncidents: { path: () => '/agent/v1/incidents', key: (i) => i.id },
  listAlertSubscriptions: { path: () => '/agent/v1/alert-subscriptions', key: (i) => i.id },
  listReceipts: { path: () => '/agent/v1/receipts', key: (i) => i.id },
};

const listOps = () => OPERATIONS.filter((op) => op.mcp?.name.startsWith('list_'));

beforeAll(async () => {
  // No worker: nothing runs in the background (bulk replays, the alert monitor), so every list holds still.
  s = await startTestServer({ worker: false });
  const sb = s.sandbox as NonNullable<TestServer['sandbox']>;
  const services = s.runtime.services;
  token = (
    await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'lists',
      expiresInMs: 3_600_000,
    })
  ).token;
  // N of each: events, endpoints, intents (and their audit entries), incidents, subscriptions, bulk items.
  for (let i = 0; i < N; i++) {
    expect((await sendSigned(s, sb.endpoint_id, sb.signing_secret, { type: 'order.paid', n: i })).status).toBe(202);
    await insertEndpoint(
      services,
      sb.shop_id,
      {
        name: `lane ${i}`,
        senderLabel: `lane-${i}`,
        triggerVariant: 'external_event',
        authMode: 'hmac_sha256',
        hmac: DEFAULT_HMAC,
        mapping: PLAIN_MAPPING,
      },
      'fpsec_list_shape_test_secret',
    );
    const preview = await api(s, token, 'POST', `/agent/v1/endpoints/${sb.endpoint_id}/test-event-intents`, {});
    expect(preview.status, preview.text).toBe(201);
    const now = services.now();
    await openAlertIncident(services.db, {
      id: newId('incident'),
      shopId: sb.shop_id,
      trigger: 'endpoint_failing',
      subject: `ep_list_${i}`,
      openKey: `endpoint_failing:ep_list_${i}`,
      summary: `listed ${i}`,
      detailsJson: '{}',
      now,
    });
    await insertAlertSubscription(services.db, {
      id: newId('alert'),
      shopId: sb.shop_id,
      channel: 'webhook',
      urlEnc: services.secrets.encrypt(`https://alerts.example.com/${i}`),
      urlOrigin: 'https://alerts.example.com',
      secretEnc: null,
      createdByGrant: sb.grant_id,
      now,
    });
  }
  await services.db.run(`UPDATE events SET state = 'failed' WHERE shop_id = ?`, [sb.shop_id]);
  const bulk = await api(s, token, 'POST', '/agent/v1/bulk-replay-intents', { state: 'failed' });
  expect(bulk.status, bulk.text).toBe(201);
  expect((await confirm(s, token, bulk.json.id)).status).toBe(200);
  bulkIntent = bulk.json.id;
});
afterAll(async () => {
  await s?.close();
});

describe('one list shape', () => {
  it('every list operation of the registry takes `cursor` and the one `limit`, and is covered here', () => {
    const ops = listOps();
    expect(ops.map((op) => op.operationId).sort()).toEqual(expect.arrayContaining(Object.keys(LISTS).sort()));
    for (const op of ops) {
      const query = (op.request as { query?: { shape: Record<string, unknown> } }).query;
      expect(query?.shape.cursor, `${op.operationId} cursor`).toBe(Cursor);
      expect(query?.shape.limit, `${op.operationId} limit`).toBe(Limit);
      expect(Object.keys(query?.shape ?? {}), op.operationId).not.toContain('starting_after');
    }
  });

  it('answers { data, page: { next_cursor, has_more, limit } }, limit 1–200, default 50', async () => {
    for (const [id, list] of Object.entries(LISTS)) {
      const first = await api(s, token, 'GET', list.path());
      expect(first.status, `${id}: ${first.text}`).toBe(200);
      expect(Object.keys(first.json).sort(), id).toEqual(['data', 'page']);
      expect(Object.keys(first.json.page).sort(), id).toEqual(['has_more', 'limit', 'next_cursor']);
      expect(first.json.page.limit, id).toBe(50);
      expect((await api(s, token, 'GET', `${list.path()}?limit=200`)).json.page?.limit, id).toBe(200);
      const old = await api(s, token, 'GET', `${list.path()}?starting_after=anything`);
      expect(old.status, `${id} starting_after`).toBe(400);
      for (const bad of ['0', '201', 'x']) {
        const r = await api(s, token, 'GET', `${list.path()}?limit=${bad}`);
        expect(r.status, `${id} limit=${bad}`).toBe(400);
        expect(r.json.code).toBe('invalid_request');
      }
    }
  });

  it('pages through every item exactly once, following page.next_cursor', async () => {
    for (const [id, list] of Object.entries(LISTS)) {
      const all = await api(s, token, 'GET', `${list.path()}?limit=200`);
      const expected = (all.json.data as unknown[]).map(list.key);
      expect(expected.length, id).toBeGreaterThanOrEqual(N);
      expect(all.json.page.has_more, id).toBe(false);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 100; pages++) {
        const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const page = await api(s, token, 'GET', `${list.path()}?limit=2${q}`);
        expect(page.status, `${id}: ${page.text}`).toBe(200);
        expect(page.json.data.length, id).toBeLessThanOrEqual(2);
        seen.push(...(page.json.data as unknown[]).map(list.key));
        expect(page.json.page.has_more, id).toBe(page.json.page.next_cursor !== null);
        cursor = page.json.page.next_cursor;
        if (!cursor) break;
      }
      expect(seen, id).toEqual(expected);
      expect(new Set(seen).size, id).toBe(seen.length);
    }
  });

  it("refuses a garbled cursor, and one list's cursor given to another, with invalid_request", async () => {
    const cursors: Record<string, string> = {};
    for (const [id, list] of Object.entries(LISTS)) {
      const page = await api(s, token, 'GET', `${list.path()}?limit=1`);
      expect(page.json.page.next_cursor, id).toBeTruthy();
      cursors[id] = page.json.page.next_cursor;
    }
    for (const [id, list] of Object.entries(LISTS)) {
      const garbled = await api(s, token, 'GET', `${list.path()}?cursor=not-a-cursor`);
      expect(garbled.status, `${id} garbled`).toBe(400);
      expect(garbled.json.code).toBe('invalid_request');
      expect(garbled.json.errors?.[0]?.path, id).toBe('cursor');
      for (const [other, cursor] of Object.entries(cursors)) {
        if (other === id) continue;
        const r = await api(s, token, 'GET', `${list.path()}?cursor=${encodeURIComponent(cursor)}`);
        expect(r.status, `${other}'s cursor given to ${id}: ${r.text}`).toBe(400);
        expect(r.json.code).toBe('invalid_request');
      }
    }
  });
});
