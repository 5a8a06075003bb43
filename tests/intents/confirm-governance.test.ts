// Must show 2–5: exactly-once confirmation under 20 concurrent requests with one
// Idempotency-Key; a preview-only grant refused at confirmation naming the execute
// scope; refusals by code, layer and docs page; the audit chain with two actors.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyAuditChain } from '../../api/src/audit/log.ts';
import { sha256Hex } from '../../api/src/lib/crypto.ts';
import { buildOpenApiDocument } from '../../api/src/http/openapi.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { createGrant } from '../../api/src/auth/grants.ts';
import { planOf } from '../../api/src/plans.ts';
import { createShop } from '../../api/src/services/shops.ts';
import { newId } from '../../api/src/ids.ts';
import { usageFor, usagePeriod } from '../../api/src/usage/meters.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, deliveredEvent, grant } from './helpers.ts';

// Several real round trips per test (intake, worker, Flow stand-in); generous on a loaded CI machine.
vi.setConfig({ testTimeout: 120_000 });

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  token = server.sandbox!.grant_token;
});
afterAll(async () => {
  await server?.close();
});

const db = () => server.runtime.services.db;
const testEventPreview = () =>
  api(server, token, 'POST', `/agent/v1/endpoints/${server.sandbox!.endpoint_id}/test-event-intents`, {
    payload: { type: 'idem', n: randomUUID() },
  });

function expectRefusal(
  r: { status: number; json: { code: string; docs_url: string; type: string; refusal: { layer: string } } },
  status: number,
  code: string,
  layer: string,
) {
  expect(r.status).toBe(status);
  expect(r.json.code).toBe(code);
  expect(r.json.refusal.layer).toBe(layer);
  expect(r.json.docs_url).toBe(`${server.url}/reference/errors/${code}/`);
  expect(r.json.type).toBe(r.json.docs_url);
}

describe('idempotent confirmation', () => {
  it('20 concurrent confirmations with one key execute exactly once; the others get the stored response or 409', async () => {
    const preview = await testEventPreview();
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 20 }, () => confirm(server, token, preview.json.id, key)));
    const ok = results.filter((r) => r.status === 200);
    const busy = results.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const r of busy) expect(r.json.code).toBe('idempotency_key_in_use');
    // Every 200 is byte-identical to the first one.
    for (const r of ok) expect(r.text).toBe(ok[0]?.text);
    // One event carries the preview's unique payload: the one the stored response names.
    const rows = await db().all<{ id: string }>('SELECT id FROM events WHERE body_sha256 = ?', [
      sha256Hex(JSON.stringify(preview.json.parameters.payload)),
    ]);
    expect(rows.map((r) => r.id)).toEqual([ok[0]?.json.result.event_id]);
    const executes = await db().all(`SELECT seq FROM audit_log WHERE target_id = ? AND action = 'test_event.execute'`, [
      preview.json.id,
    ]);
    expect(executes).toHaveLength(1);
    // A later retry with the same key returns the stored response, byte for byte.
    const retry = await confirm(server, token, preview.json.id, key);
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(ok[0]?.text);
    console.log(
      `[intents] 20 concurrent confirmations: ${ok.length} × 200 (stored response), ${busy.length} × 409, executions: 1`,
    );
  }, 180_000);

  it('same key + a different request → 422; a missing key → 400; a second key on an executed intent → refused', async () => {
    const a = await testEventPreview();
    const b = await testEventPreview();
    const key = randomUUID();
    expect((await confirm(server, token, a.json.id, key)).status).toBe(200);
    const reused = await confirm(server, token, b.json.id, key);
    expect(reused.status).toBe(422);
    expect(reused.json.code).toBe('idempotency_key_reused');
    const missing = await api(server, token, 'POST', `/agent/v1/action-intents/${b.json.id}/confirm`);
    expect(missing.status).toBe(400);
    expect(missing.json.code).toBe('idempotency_key_missing');
    const twice = await confirm(server, token, a.json.id, randomUUID());
    expectRefusal(twice, 409, 'intent_not_confirmable', 'target_state');
  });

  it('a change to the target after preview refuses the confirmation; a fresh preview is needed', async () => {
    const created = await confirm(
      server,
      token,
      (
        await api(server, token, 'POST', '/agent/v1/endpoints/intents', {
          name: 'Stale',
          trigger_variant: 'external_event',
          auth_mode: 'hmac_sha256',
        })
      ).json.id,
    );
    const id = created.json.result.endpoint_id;
    const first = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/edit-intents`, { name: 'First' });
    const second = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/edit-intents`, { name: 'Second' });
    expect((await confirm(server, token, second.json.id)).status).toBe(200);
    const key = randomUUID();
    const stale = await confirm(server, token, first.json.id, key);
    expectRefusal(stale, 409, 'intent_stale', 'target_state');
    expect((await api(server, token, 'GET', `/agent/v1/action-intents/${first.json.id}`)).json).toMatchObject({
      state: 'refused',
      error_code: 'intent_stale',
    });
    // A retry with the same key gets the same refusal (the intent is refused for good), not the
    // intent_not_confirmable its new state would answer; a new key asks the intent afresh.
    const retry = await confirm(server, token, first.json.id, key);
    expectRefusal(retry, 409, 'intent_stale', 'target_state');
    expect(retry.json.detail).toBe(stale.json.detail);
    expectRefusal(await confirm(server, token, first.json.id), 409, 'intent_not_confirmable', 'target_state');
  });

  it('a refusal that leaves the intent previewed (the execution cap) releases the key: the same key confirms once the cause is gone', async () => {
    const p = await testEventPreview();
    expect(p.status).toBe(201);
    const period = usagePeriod(Date.now());
    const shopId = server.sandbox!.shop_id;
    const before = await db().get<{ count: number }>(
      `SELECT count FROM usage_counters WHERE shop_id = ? AND period = ? AND meter = 'execution'`,
      [shopId, period],
    );
    const setExecutions = (n: number) =>
      db().run(
        `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'execution', ?)
         ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = excluded.count`,
        [shopId, period, n],
      );
    const key = randomUUID();
    await setExecutions(planOf('free').monthly.executions);
    try {
      expectRefusal(await confirm(server, token, p.json.id, key), 402, 'plan_limit_reached', 'usage');
    } finally {
      await setExecutions(Number(before?.count ?? 0));
    }
    const ok = await confirm(server, token, p.json.id, key);
    expect(ok.status).toBe(200);
    expect(ok.json.state).toBe('executed');
  });

  it('cancel: a cancelled intent can never be confirmed', async () => {
    const p = await testEventPreview();
    const c = await api(server, token, 'POST', `/agent/v1/action-intents/${p.json.id}/cancel`);
    expect(c.status).toBe(200);
    expect(c.json.state).toBe('cancelled');
    expectRefusal(await confirm(server, token, p.json.id), 409, 'intent_not_confirmable', 'target_state');
    const list = await api(server, token, 'GET', '/agent/v1/action-intents?state=cancelled&kind=test_event');
    expect(list.json.data.map((i: { id: string }) => i.id)).toContain(p.json.id);
  });
});

describe('authority', () => {
  it('a preview-scoped grant can preview and is refused at confirmation naming the execute scope and a docs URL', async () => {
    const operator = await grant(server, 'operator', 'triage-agent');
    const eventId = await deliveredEvent(server);
    const preview = await api(server, operator.token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(preview.status).toBe(201);
    const refused = await confirm(server, operator.token, preview.json.id);
    expectRefusal(refused, 403, 'missing_scope', 'authority');
    expect(refused.json.refusal.required_scope).toBe('replay:execute');
    expect(refused.json.refusal.next_steps.map((s: { kind: string }) => s.kind)).toEqual([
      'call',
      'merchant_page',
      'docs',
      'manifest',
      'openapi',
      'ask_human',
    ]);
    // Nothing ran and the intent is still awaiting a grant that may confirm it.
    expect((await api(server, operator.token, 'GET', `/agent/v1/action-intents/${preview.json.id}`)).json.state).toBe(
      'previewed',
    );
  });

  it('an observer grant cannot preview, and intents of another shop answer 404', async () => {
    const observer = await grant(server, 'observer', 'watcher');
    const r = await api(
      server,
      observer.token,
      'POST',
      `/agent/v1/endpoints/${server.sandbox!.endpoint_id}/test-event-intents`,
      {},
    );
    expect(r.status).toBe(403);
    expect(r.json.refusal.required_scope).toBe('test_event:preview');
    const c = await confirm(server, observer.token, 'int_00000000000000000000000000');
    expect(c.status).toBe(403);
    expect((await api(server, token, 'GET', '/agent/v1/action-intents/int_00000000000000000000000000')).status).toBe(
      404,
    );
  });
});

describe('intents list paging', () => {
  it("the cursor pages every intent once; a raw intent id, another shop's cursor or another list's is refused, not read as a position", async () => {
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push((await testEventPreview()).json.id as string);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await api(
        server,
        token,
        'GET',
        `/agent/v1/action-intents?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.json.data.map((i: { id: string }) => i.id));
      cursor = page.json.page.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of mine) expect(seen).toContain(id);

    const other = await createShop(server.runtime.services, {
      domain: `other-${randomUUID().slice(0, 8)}.myshopify.com`,
      accessToken: 'shpat_other',
    });
    const otherGrant = await createGrant(server.runtime.services, {
      shopId: other.id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'other-shop',
      expiresInMs: 3_600_000,
    });
    for (let i = 0; i < 2; i++)
      expect((await api(server, otherGrant.token, 'POST', '/agent/v1/diagnostics/share-intents', {})).status).toBe(201);
    const foreignCursor = (await api(server, otherGrant.token, 'GET', '/agent/v1/action-intents?limit=1')).json.page
      .next_cursor as string;
    expect(foreignCursor).toBeTruthy();
    await deliveredEvent(server);
    await deliveredEvent(server);
    const eventsCursor = (await api(server, token, 'GET', '/agent/v1/events?limit=1')).json.page.next_cursor as string;
    expect(eventsCursor).toBeTruthy();
    for (const bad of ['garbage', 'zzzz', mine[0] as string, foreignCursor, eventsCursor]) {
      const r = await api(server, token, 'GET', `/agent/v1/action-intents?cursor=${encodeURIComponent(bad)}`);
      expect(r.status, bad).toBe(400);
      expect(r.json.code).toBe('invalid_request');
      expect(r.json.errors[0].path).toBe('cursor');
      expect(r.text).not.toContain(other.domain);
    }
  });
});

describe('refusals by layer', () => {
  it('expired intent → intent_expired (target_state)', async () => {
    const p = await testEventPreview();
    await db().run('UPDATE action_intents SET expires_at = ? WHERE id = ?', [Date.now() - 1, p.json.id]);
    expect((await api(server, token, 'GET', `/agent/v1/action-intents/${p.json.id}`)).json.state).toBe('expired');
    expectRefusal(await confirm(server, token, p.json.id), 410, 'intent_expired', 'target_state');
    // A retry (any key, any grant that may confirm it) meets the same refusal, not a different code.
    expectRefusal(await confirm(server, token, p.json.id), 410, 'intent_expired', 'target_state');
    // Cancelling it meets the same refusal too.
    const cancel = await api(server, token, 'POST', `/agent/v1/action-intents/${p.json.id}/cancel`);
    expectRefusal(cancel, 410, 'intent_expired', 'target_state');
    expect((await api(server, token, 'GET', `/agent/v1/action-intents/${p.json.id}`)).json.state).toBe('expired');
  });

  it('expired retention → retention_expired (target_state), at preview and at confirmation', async () => {
    const eventId = await deliveredEvent(server);
    const p = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(p.status).toBe(201);
    await db().run(`UPDATE events SET body = NULL, retention_state = 'expired' WHERE id = ?`, [eventId]);
    expectRefusal(await confirm(server, token, p.json.id), 410, 'retention_expired', 'target_state');
    expect((await api(server, token, 'GET', `/agent/v1/action-intents/${p.json.id}`)).json.state).toBe('refused');
    const again = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expectRefusal(again, 410, 'retention_expired', 'target_state');
  });

  it('a body past its expiry is unavailable for replay in the event reads too, before the sweep purges it', async () => {
    const eventId = await deliveredEvent(server);
    await db().run('UPDATE events SET body_expires_at = ? WHERE id = ?', [Date.now() - 1, eventId]);
    const preview = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expectRefusal(preview, 410, 'retention_expired', 'target_state');
    // The reads say the same as the preview.
    const read = await api(server, token, 'GET', `/agent/v1/events/${eventId}`);
    expect(read.json.replay).toMatchObject({ available: false, reason: 'retention_expired' });
    const replayable = await api(server, token, 'GET', '/agent/v1/events?replay_available=true&limit=200');
    expect(replayable.json.data.map((e: { id: string }) => e.id)).not.toContain(eventId);
    const notReplayable = await api(server, token, 'GET', '/agent/v1/events?replay_available=false&limit=200');
    expect(notReplayable.json.data.map((e: { id: string }) => e.id)).toContain(eventId);
  });

  it('archived endpoint → endpoint_archived (target_state)', async () => {
    const created = await confirm(
      server,
      token,
      (
        await api(server, token, 'POST', '/agent/v1/endpoints/intents', {
          name: 'Archived',
          trigger_variant: 'external_event',
          auth_mode: 'hmac_sha256',
        })
      ).json.id,
    );
    const id = created.json.result.endpoint_id;
    await confirm(
      server,
      token,
      (await api(server, token, 'POST', `/agent/v1/endpoints/${id}/delete-intents`, { mode: 'archive' })).json.id,
    );
    expectRefusal(
      await api(server, token, 'POST', `/agent/v1/endpoints/${id}/test-event-intents`, {}),
      409,
      'endpoint_archived',
      'target_state',
    );
    expectRefusal(
      await api(server, token, 'POST', `/agent/v1/endpoints/${id}/rotate-secret-intents`, {}),
      409,
      'endpoint_archived',
      'target_state',
    );
  });

  it('exhausted replay cap → replay_limit_reached (usage)', async () => {
    const eventId = await deliveredEvent(server);
    const p = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(p.status).toBe(201);
    const limit = planOf('free').monthly.replays;
    await db().run(
      `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'replays', ?)
       ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = excluded.count`,
      [server.sandbox!.shop_id, usagePeriod(Date.now()), limit],
    );
    try {
      const refused = await confirm(server, token, p.json.id);
      expectRefusal(refused, 402, 'replay_limit_reached', 'usage');
      // A usage refusal leaves the intent confirmable once the cap allows it.
      expect((await api(server, token, 'GET', `/agent/v1/action-intents/${p.json.id}`)).json.state).toBe('previewed');
      expectRefusal(
        await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
          acknowledge_recent_delivery: true,
        }),
        402,
        'replay_limit_reached',
        'usage',
      );
    } finally {
      await db().run(`UPDATE usage_counters SET count = 0 WHERE shop_id = ? AND meter = 'replays'`, [
        server.sandbox!.shop_id,
      ]);
    }
  });

  it('used-up execution cap → previews refused and confirmations refused with plan_limit_reached (usage), declared by the contract', async () => {
    const eventId = await deliveredEvent(server);
    const early = await testEventPreview();
    expect(early.status).toBe(201);
    const limit = planOf('free').monthly.executions;
    const period = usagePeriod(Date.now());
    const before = await db().get<{ count: number }>(
      `SELECT count FROM usage_counters WHERE shop_id = ? AND period = ? AND meter = 'execution'`,
      [server.sandbox!.shop_id, period],
    );
    await db().run(
      `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'execution', ?)
       ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = excluded.count`,
      [server.sandbox!.shop_id, period, limit],
    );
    try {
      // Every kind's preview is refused up front: it could not be confirmed this month.
      expectRefusal(await testEventPreview(), 402, 'plan_limit_reached', 'usage');
      const replay = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
        acknowledge_recent_delivery: true,
      });
      expectRefusal(replay, 402, 'plan_limit_reached', 'usage');
      expect(replay.json.meter).toBe('execution');
      // An intent previewed before the cap ran out is refused at confirmation and stays confirmable.
      const refused = await confirm(server, token, early.json.id);
      expectRefusal(refused, 402, 'plan_limit_reached', 'usage');
      expect((await api(server, token, 'GET', `/agent/v1/action-intents/${early.json.id}`)).json.state).toBe(
        'previewed',
      );
      const contract = buildOpenApiDocument(OPERATIONS) as any;
      const confirmOp = contract.paths['/agent/v1/action-intents/{intent_id}/confirm'].post;
      expect(confirmOp['x-flowport-error-codes']).toContain('plan_limit_reached');
      expect(confirmOp.responses['402'].description).toContain('plan_limit_reached');
    } finally {
      await db().run(`UPDATE usage_counters SET count = ? WHERE shop_id = ? AND period = ? AND meter = 'execution'`, [
        before?.count ?? 0,
        server.sandbox!.shop_id,
        period,
      ]);
    }
  });

  it('every refusal docs URL resolves to a catalog code', async () => {
    const { isErrorCode } = await import('../../api/src/errors/catalog.ts');
    for (const code of [
      'intent_expired',
      'retention_expired',
      'endpoint_archived',
      'replay_limit_reached',
      'replay_recent_delivery',
      'outside_product_boundary',
    ]) {
      expect(isErrorCode(code)).toBe(true);
    }
  });
});

describe('metering', () => {
  it('a preview the operation refuses is not counted against the monthly previews; a created one is', async () => {
    const previews = async () => (await usageFor(db(), server.sandbox!.shop_id)).preview;
    const planPreviews = async () =>
      (await api(server, token, 'GET', '/agent/v1/plan-usage')).json.meters.find(
        (m: { meter: string }) => m.meter === 'preview',
      )?.used;
    const start = await previews();
    // Refused after admission: no such event; a permanent delete of an endpoint that is not archived.
    const missing = await api(server, token, 'POST', `/agent/v1/events/${newId('event')}/replay-intents`, {});
    expect(missing.status).toBe(404);
    const deleteIntent = (body: unknown) =>
      api(server, token, 'POST', `/agent/v1/endpoints/${server.sandbox!.endpoint_id}/delete-intents`, body);
    expect((await deleteIntent({ mode: 'permanent' })).json.code).toBe('endpoint_not_archived');
    // A body the contract refuses is not counted either.
    expect((await deleteIntent({})).json.code).toBe('invalid_request');
    expect(await previews()).toBe(start);
    const created = await testEventPreview();
    expect(created.status).toBe(201);
    expect(await previews()).toBe(start + 1);
    expect(await planPreviews()).toBe(start + 1);
  });
});

describe('audit', () => {
  it('the action names the contract gives as filter examples are actions the log records', async () => {
    const doc = buildOpenApiDocument(OPERATIONS) as any;
    const param = doc.paths['/agent/v1/audit'].get.parameters.find((p: { name: string }) => p.name === 'action');
    // grant.* entries are written by the operator CLI on the host, not by this API.
    const examples = [...(param.description as string).matchAll(/`([^`]+)`/g)]
      .map((m) => m[1] as string)
      .filter((a) => !a.startsWith('grant.'));
    expect(examples.length).toBeGreaterThan(0);
    const eventId = await deliveredEvent(server);
    const p = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect((await confirm(server, token, p.json.id)).status).toBe(200);
    for (const action of examples) {
      const r = await api(
        server,
        token,
        'GET',
        `/agent/v1/audit?action=${encodeURIComponent(action)}&target_id=${p.json.id}`,
      );
      expect(r.json.data.length, action).toBeGreaterThan(0);
    }
    // Every entry about the intent names it the same way; each step is one entry (issue 42), the engine's.
    const all = await api(server, token, 'GET', `/agent/v1/audit?target_id=${p.json.id}&limit=50`);
    const types = new Set(all.json.data.map((e: { target: { type: string } }) => e.target.type));
    expect(all.json.data.map((e: { action: string }) => e.action).reverse()).toEqual([
      'replay.preview',
      'replay.confirm',
      'replay.execute',
    ]);
    expect([...types]).toEqual(['action_intent']);
  });

  it("a replay's note is kept with the intent and in the audit log, as the contract says", async () => {
    const eventId = await deliveredEvent(server);
    const note = 'Customer says the order tag never arrived';
    const p = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
      note,
    });
    expect(p.status).toBe(201);
    expect(p.json.parameters.note).toBe(note);
    const log = await api(server, token, 'GET', `/agent/v1/audit?action=replay.preview&target_id=${p.json.id}`);
    expect(log.json.data.map((e: { details: { note?: string } }) => e.details.note)).toEqual([note]);
  });

  it('the hash-chained audit log shows preview and confirmation of one intent by different actors', async () => {
    const previewer = await grant(server, 'operator', 'triage-agent', 'agent');
    const confirmer = await grant(server, 'recovery_operator', 'Dana (merchant)', 'human');
    const eventId = await deliveredEvent(server);
    const p = await api(server, previewer.token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(p.status).toBe(201);
    expect((await confirm(server, previewer.token, p.json.id)).status).toBe(403);
    const done = await confirm(server, confirmer.token, p.json.id);
    expect(done.status).toBe(200);
    expect(done.json.created_by).toMatchObject({
      grant_id: previewer.id,
      actor_name: 'triage-agent',
      actor_kind: 'agent',
    });
    expect(done.json.confirmed_by).toMatchObject({
      grant_id: confirmer.id,
      actor_name: 'Dana (merchant)',
      actor_kind: 'human',
    });

    const entries = await db().all<{ action: string; actor_grant_id: string; actor_kind: string; outcome: string }>(
      'SELECT action, actor_grant_id, actor_kind, outcome FROM audit_log WHERE target_id = ? ORDER BY seq',
      [p.json.id],
    );
    // The engine's own entries (the operation pipeline may add its own per-request entries beside them).
    const engine = entries.filter((e) => e.action.startsWith('replay.'));
    expect(engine.map((e) => [e.action, e.actor_grant_id, e.outcome])).toEqual([
      ['replay.preview', previewer.id, 'success'],
      ['replay.confirm', previewer.id, 'refused'],
      ['replay.confirm', confirmer.id, 'success'],
      ['replay.execute', confirmer.id, 'success'],
    ]);
    const chain = await verifyAuditChain(db());
    expect(chain.ok).toBe(true);
  });

  it('pages the audit list with sealed cursors: every entry once, newest first; edited or foreign cursors refused', async () => {
    // A few more entries so there are several pages.
    for (let i = 0; i < 3; i++) expect((await testEventPreview()).status).toBe(201);
    const admin = await grant(server, 'admin_assistant', 'auditor', 'agent');
    const seen: number[] = [];
    let cursor: string | null = null;
    let first: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await api(server, admin.token, 'GET', `/agent/v1/audit?limit=2${q}`);
      expect(page.status, page.text).toBe(200);
      seen.push(...page.json.data.map((e: { seq: number }) => e.seq));
      cursor = page.json.page.next_cursor;
      first ??= cursor;
      // Opaque: not the old readable `s<seq>` form.
      if (cursor) expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toMatch(/^s\d+$/);
    } while (cursor);
    // The shop's own sequence (issue 24: no global position is shown to a tenant).
    const rows = await db().all<{ shop_seq: number }>(
      'SELECT shop_seq FROM audit_log WHERE shop_id = ? ORDER BY shop_seq DESC',
      [server.sandbox!.shop_id],
    );
    // Entries written while paging (this listing's own metering) are newer than the first page.
    const expected = rows.map((r) => Number(r.shop_seq)).filter((s) => s <= (seen[0] as number));
    expect(expected.at(-1)).toBe(1);
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(seen.length);

    const refused = async (c: string) => {
      const r = await api(server, admin.token, 'GET', `/agent/v1/audit?cursor=${encodeURIComponent(c)}`);
      expect(r.status).toBe(400);
      expect(r.json.code).toBe('invalid_request');
    };
    const c = first as string;
    await refused(`${c.slice(0, -1)}${c.endsWith('A') ? 'B' : 'A'}`);
    // The old readable form, naming any position, no longer pages.
    await refused(Buffer.from(`s${seen[1]}`).toString('base64url'));
    // An events cursor of the same shop is sealed for another listing.
    const events = await api(server, admin.token, 'GET', '/agent/v1/events?limit=1');
    expect(events.status).toBe(200);
    if (events.json.page.next_cursor) await refused(events.json.page.next_cursor);
  });
});
