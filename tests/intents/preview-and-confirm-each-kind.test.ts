// Must show 1: for each intent kind, preview → confirm → the effect in the store
// and, for replay and test event, in the sandbox's received Flow triggers.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NEW_EVENT_ID } from '../../api/src/intents/kinds/common.ts';
import { countEndpointReceipts } from '../../api/src/reads/receipts.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm, deliveredEvent, sendSigned, triggerFor, waitDelivered, waitFor } from './helpers.ts';

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

describe('event replay', () => {
  it('preview shows the event, config, readiness and cost; confirm creates a linked event that reaches Flow', async () => {
    const creds = server.sandbox!;
    const original = await deliveredEvent(server);
    const preview = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
      acknowledge_recent_delivery: true,
    });
    expect(preview.status).toBe(201);
    const intent = preview.json;
    expect(intent.id).toMatch(/^int_/);
    expect(intent).toMatchObject({
      kind: 'replay',
      state: 'previewed',
      target: { type: 'event', id: original },
      required_scope: 'replay:execute',
    });
    expect(intent.preview.target.event_id).toBe(original);
    expect(intent.preview.current_config.secret_last4).toHaveLength(4);
    expect(JSON.stringify(intent)).not.toContain(creds.signing_secret);
    expect(intent.preview.details.flow_readiness.trigger_handle).toBeTruthy();
    expect(intent.preview.details.duplicate_side_effects.within_recent_window).toBe(true);
    expect(intent.preview.warnings.join(' ')).toMatch(/no idempotency/);
    expect(intent.meter_cost.cap).toMatchObject({ meter: 'replays', cost: 1 });
    expect(Date.parse(intent.expires_at)).toBeGreaterThan(Date.parse(intent.created_at));

    const done = await confirm(server, token, intent.id);
    expect(done.status).toBe(200);
    expect(done.json.state).toBe('executed');
    const replayId = done.json.result.event_id as string;
    expect(replayId).toMatch(/^evt_/);
    const row = await db().get<{ replay_of: string; body_sha256: string }>(
      'SELECT replay_of, body_sha256 FROM events WHERE id = ?',
      [replayId],
    );
    expect(row?.replay_of).toBe(original);
    await waitDelivered(server, replayId);
    const trigger = await triggerFor(server, creds.shop_domain, replayId);
    expect(trigger.handle).toBeTruthy();
    const attempt = await db().get<{ trigger: string }>(
      'SELECT trigger FROM attempts WHERE event_id = ? ORDER BY id LIMIT 1',
      [replayId],
    );
    expect(attempt?.trigger).toBe('replay');
    // replayed_by is derivable from replay_of
    const again = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
      acknowledge_recent_delivery: true,
      acknowledge_recovered: true,
    });
    expect(again.json.preview.target.recovered_by).toBe(replayId);
    expect(again.json.preview.target.replayed_by.map((r: { event_id: string }) => r.event_id)).toContain(replayId);
  });

  it('without the acknowledgement a replay minutes after delivery is refused (safety)', async () => {
    const original = await deliveredEvent(server);
    const r = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {});
    expect(r.status).toBe(409);
    expect(r.json.code).toBe('replay_recent_delivery');
    expect(r.json.refusal.layer).toBe('safety');
  });

  it('replaying an older replay still needs the acknowledgement when another replay of the same original just reached Flow', async () => {
    const original = await deliveredEvent(server);
    const replayOf = async (eventId: string, body: Record<string, unknown>) => {
      const p = await api(server, token, 'POST', `/agent/v1/events/${eventId}/replay-intents`, body);
      expect(p.status, p.text).toBe(201);
      const done = await confirm(server, token, p.json.id);
      expect(done.status, done.text).toBe(200);
      await waitDelivered(server, done.json.result.event_id);
      return done.json.result.event_id as string;
    };
    const first = await replayOf(original, { acknowledge_recent_delivery: true });
    // The original and its first replay reached Flow an hour ago ...
    await db().run('UPDATE events SET delivered_at = ? WHERE id IN (?, ?)', [Date.now() - 3_600_000, original, first]);
    // ... and a second replay of the original reaches it now.
    // (The original is recovered by its first replay: a second one is acknowledged as such.)
    const second = await replayOf(original, { acknowledge_recovered: true });
    // Replaying the first replay would hand Flow the same event again, seconds after the second: the
    // family is recovered (by the first replay, the first by the second), and recently delivered.
    const recovered = await api(server, token, 'POST', `/agent/v1/events/${first}/replay-intents`, {});
    expect(recovered.json.code).toBe('event_already_recovered');
    expect(recovered.json.recovered_by).toBe(second);
    const r = await api(server, token, 'POST', `/agent/v1/events/${first}/replay-intents`, {
      acknowledge_recovered: true,
    });
    expect(r.status, r.text).toBe(409);
    expect(r.json.code).toBe('replay_recent_delivery');
    const delivered = await db().get<{ delivered_at: number }>('SELECT delivered_at FROM events WHERE id = ?', [
      second,
    ]);
    expect(r.json.last_delivered_at).toBe(new Date(Number(delivered?.delivered_at)).toISOString());
  });

  it('editing the payload is outside the product boundary', async () => {
    const original = await deliveredEvent(server);
    const r = await api(server, token, 'POST', `/agent/v1/events/${original}/replay-intents`, {
      acknowledge_recent_delivery: true,
      payload_override: { total: '0.00' },
    });
    expect(r.status).toBe(422);
    expect(r.json.refusal.layer).toBe('product_boundary');
  });
});

describe('test event', () => {
  it('preview shows the exact Flow payload; confirm sends a marked test event through the pipeline to Flow', async () => {
    const creds = server.sandbox!;
    const preview = await api(server, token, 'POST', `/agent/v1/endpoints/${creds.endpoint_id}/test-event-intents`, {
      payload: { type: 'order.paid', note: 'hello from a test' },
    });
    expect(preview.status).toBe(201);
    const payload = preview.json.preview.details.flow_payload;
    expect(JSON.stringify(payload)).toContain('hello from a test');
    const done = await confirm(server, token, preview.json.id);
    expect(done.status).toBe(200);
    expect(done.json.result).toMatchObject({ is_test: true });
    const eventId = done.json.result.event_id as string;
    expect(eventId).toMatch(/^evt_/);
    const row = await db().get<{ is_test: number; sender: string }>('SELECT is_test, sender FROM events WHERE id = ?', [
      eventId,
    ]);
    expect(Number(row?.is_test)).toBe(1);
    expect(row?.sender).toBe('flowport-test');
    await waitDelivered(server, eventId);
    const trigger = await triggerFor(server, creds.shop_domain, eventId);
    // The payload Flow received is the one the preview showed, except the send time and
    // the new event's id, which the preview names by a placeholder.
    const { ['Received at']: _r1, ...sent } = trigger.payload;
    const { ['Received at']: _r2, ...shown } = payload;
    expect(JSON.stringify(shown)).toContain(NEW_EVENT_ID);
    expect(sent).toEqual(JSON.parse(JSON.stringify(shown).replaceAll(NEW_EVENT_ID, eventId)));
    const attempt = await db().get<{ trigger: string }>(
      'SELECT trigger FROM attempts WHERE event_id = ? ORDER BY id LIMIT 1',
      [eventId],
    );
    expect(attempt?.trigger).toBe('test');
  });

  it('the test event is created when confirmed: events received after the preview sort before it, in both orders', async () => {
    const creds = server.sandbox!;
    const preview = await api(server, token, 'POST', `/agent/v1/endpoints/${creds.endpoint_id}/test-event-intents`, {});
    expect(preview.status).toBe(201);
    // Two sender events arrive between the preview and its confirmation; an agent starts paging oldest first.
    const between: string[] = [];
    for (const n of [1, 2]) {
      const sent = await sendSigned(server, creds.endpoint_id, creds.signing_secret, { type: 'order.paid', n });
      expect(sent.status).toBe(202);
      between.push(sent.json.event_id as string);
    }
    const since = encodeURIComponent(preview.json.created_at);
    const firstPage = await api(server, token, 'GET', `/agent/v1/events?order=asc&received_after=${since}&limit=1`);
    expect(firstPage.json.data.map((e: { id: string }) => e.id)).toEqual([between[0]]);

    const done = await confirm(server, token, preview.json.id);
    expect(done.status).toBe(200);
    const testId = done.json.result.event_id as string;

    // Oldest first: the cursor taken before the confirmation still reaches the test event, at the end.
    const cursor = encodeURIComponent(firstPage.json.page.next_cursor);
    const rest = await api(server, token, 'GET', `/agent/v1/events?order=asc&received_after=${since}&cursor=${cursor}`);
    expect(rest.json.data.map((e: { id: string }) => e.id)).toEqual([between[1], testId]);
    // Newest first: the test event heads the list, and receive times never increase down the page.
    const newest = await api(server, token, 'GET', '/agent/v1/events?limit=3');
    expect(newest.json.data.map((e: { id: string }) => e.id)).toEqual([testId, between[1], between[0]]);
    const times = newest.json.data.map((e: { received_at: string }) => Date.parse(e.received_at));
    expect(times).toEqual([...times].sort((x: number, y: number) => y - x));
  });
});

describe('diagnostics share', () => {
  it('preview lists included/excluded; confirm freezes a redacted bundle behind an expiring link readable without a grant', async () => {
    const creds = server.sandbox!;
    await deliveredEvent(server, { type: 'order.paid', secret_customer_note: 'do-not-leak-7731' });
    const preview = await api(server, token, 'POST', '/agent/v1/diagnostics/share-intents', { expires_in_hours: 2 });
    expect(preview.status).toBe(201);
    expect(preview.json.preview.details.excluded.join(' ')).toMatch(/payload bodies/);
    expect(preview.json.preview.details.included.length).toBeGreaterThan(3);
    const done = await confirm(server, token, preview.json.id);
    expect(done.status).toBe(200);
    const url = done.json.result.share_url as string;
    expect(url).toContain('/shared/diagnostics/');

    const html = await fetch(url);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/text\/html/);
    const htmlText = await html.text();
    expect(htmlText).toContain(creds.shop_domain);
    const json = await fetch(`${url}.json`);
    expect(json.status).toBe(200);
    const text = await json.text();
    const bundle = JSON.parse(text);
    expect(bundle.endpoints[0].id).toBe(creds.endpoint_id);
    expect(bundle.receipts.length).toBeGreaterThan(0);
    for (const leaked of [creds.signing_secret, creds.grant_token, 'do-not-leak-7731']) {
      expect(text).not.toContain(leaked);
      expect(htmlText).not.toContain(leaked);
    }
    const negotiated = await fetch(url, { headers: { accept: 'application/json' } });
    expect(JSON.parse(await negotiated.text()).share_id).toBe(bundle.share_id);
    // One derivation: the frozen readiness is get_diagnostics' checks, not a second set of its own.
    const diagnostics = await api(server, token, 'GET', '/agent/v1/diagnostics');
    expect(diagnostics.status).toBe(200);
    expect(bundle.readiness).toEqual(diagnostics.json.checks);
    expect(bundle.readiness.length).toBeGreaterThan(3);

    // Only the token hash is stored, and later reads of the intent never show the link.
    const token0 = url.split('/').pop() as string;
    const stored = await db().get<{ token_hash: string }>('SELECT token_hash FROM diagnostics_shares WHERE id = ?', [
      bundle.share_id,
    ]);
    expect(stored?.token_hash).not.toBe(token0);
    const read = await api(server, token, 'GET', `/agent/v1/action-intents/${preview.json.id}`);
    expect(read.text).not.toContain(token0);

    // Expired → 410; unknown → 404.
    await db().run('UPDATE diagnostics_shares SET expires_at = ? WHERE id = ?', [Date.now() - 1, bundle.share_id]);
    expect((await fetch(url)).status).toBe(410);
    expect((await fetch(`${server.url}/shared/diagnostics/${'x'.repeat(43)}`)).status).toBe(404);
    // The JSON form refuses as problem+json with a catalog code whose docs page exists.
    for (const [link, status, code] of [
      [`${url}.json`, 410, 'diagnostics_share_gone'],
      [`${server.url}/shared/diagnostics/${'x'.repeat(43)}.json`, 404, 'not_found'],
    ] as const) {
      const res = await fetch(link);
      expect([res.status, res.headers.get('content-type'), res.headers.get('cache-control')]).toEqual([
        status,
        'application/problem+json',
        'no-store',
      ]);
      const p = (await res.json()) as { code: string; docs_url: string };
      expect(p.code).toBe(code);
      expect(new URL(p.docs_url).pathname).toBe(`/reference/errors/${code}/`);
    }
  });
});

const countReceipts = (endpointId: string) => countEndpointReceipts(db(), endpointId);

/** A sender request to an archived endpoint, refused as endpoint_gone with its receipt, as intake writes it. */
async function recordRefusedRetry(endpointId: string) {
  const before = await countReceipts(endpointId);
  const r = await waitFor(async () => {
    const sent = await sendSigned(server, endpointId, 'not-the-secret', { type: 'late-retry' });
    return sent.status === 410 ? sent : undefined;
  });
  expect(r.json.code).toBe('endpoint_gone');
  expect(await countReceipts(endpointId)).toBeGreaterThan(before);
}

describe('endpoints', () => {
  it('create: preview shows the config; confirm returns the secret once and the endpoint accepts signed events', async () => {
    const preview = await api(server, token, 'POST', '/agent/v1/endpoints/intents', {
      name: 'Orders from ERP',
      trigger_variant: 'external_event',
      auth_mode: 'hmac_sha256',
    });
    expect(preview.status).toBe(201);
    expect(preview.json.preview.details.config.name).toBe('Orders from ERP');
    const done = await confirm(server, token, preview.json.id);
    expect(done.status).toBe(200);
    const { endpoint_id: id, secret } = done.json.result;
    expect(secret).toMatch(/^fpsec_/);
    const read = await api(server, token, 'GET', `/agent/v1/action-intents/${preview.json.id}`);
    expect(read.text).not.toContain(secret);
    expect(read.json.result.secret_last4).toBe(secret.slice(-4));
    const row = await db().get<{ status: string; secret_enc: string }>(
      'SELECT status, secret_enc FROM endpoints WHERE id = ?',
      [id],
    );
    expect(row?.status).toBe('active');
    expect(row?.secret_enc).not.toContain(secret);
    const ack = await sendSigned(server, id, secret, { type: 'ping' });
    expect(ack.status).toBe(202);
  });

  it('edit: preview shows a diff and the effect on queued events; confirm writes a new config version', async () => {
    const created = await confirm(
      server,
      token,
      (
        await api(server, token, 'POST', '/agent/v1/endpoints/intents', {
          name: 'Edit me',
          trigger_variant: 'external_event',
          auth_mode: 'hmac_sha256',
        })
      ).json.id,
    );
    const id = created.json.result.endpoint_id;
    const preview = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/edit-intents`, {
      name: 'Edited',
      status: 'paused',
    });
    expect(preview.status).toBe(201);
    const paths = preview.json.preview.details.diff.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['name', 'status']));
    expect(preview.json.preview.details.effect_on_queued_events.length).toBeGreaterThan(0);
    const done = await confirm(server, token, preview.json.id);
    expect(done.json.result).toMatchObject({ config_version: 2, status: 'paused' });
    const row = await db().get<{ name: string; config_version: number; status: string }>(
      'SELECT name, config_version, status FROM endpoints WHERE id = ?',
      [id],
    );
    expect(row).toMatchObject({ name: 'Edited', status: 'paused' });
    expect(Number(row?.config_version)).toBe(2);
    const versions = await db().all('SELECT version FROM endpoint_versions WHERE endpoint_id = ?', [id]);
    expect(versions).toHaveLength(2);
  });

  it('secret rotation: preview shows the overlap; confirm returns the new secret once and both verify during the overlap', async () => {
    const created = await confirm(
      server,
      token,
      (
        await api(server, token, 'POST', '/agent/v1/endpoints/intents', {
          name: 'Rotate me',
          trigger_variant: 'external_event',
          auth_mode: 'hmac_sha256',
        })
      ).json.id,
    );
    const id = created.json.result.endpoint_id;
    const oldSecret = created.json.result.secret;
    const preview = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/rotate-secret-intents`, {
      overlap_hours: 2,
    });
    expect(preview.status).toBe(201);
    expect(preview.json.preview.details.overlap_hours).toBe(2);
    const done = await confirm(server, token, preview.json.id);
    const newSecret = done.json.result.secret;
    expect(newSecret).toBeTruthy();
    expect(newSecret).not.toBe(oldSecret);
    expect(done.json.result.previous_secret_valid_until).toBeTruthy();
    expect((await sendSigned(server, id, newSecret, { type: 'a' })).status).toBe(202);
    expect((await sendSigned(server, id, oldSecret, { type: 'b' })).status).toBe(202);
  });

  it("a change confirmed through the API applies to this server's intake at once: pause, rotation without overlap, archive", async () => {
    const previewAndConfirm = async (path: string, body: unknown) => {
      const p = await api(server, token, 'POST', path, body);
      expect(p.status, p.text).toBe(201);
      const done = await confirm(server, token, p.json.id);
      expect(done.status, done.text).toBe(200);
      return done.json;
    };
    const created = await previewAndConfirm('/agent/v1/endpoints/intents', {
      name: 'Change me',
      trigger_variant: 'external_event',
      auth_mode: 'hmac_sha256',
    });
    const id = created.result.endpoint_id as string;
    const oldSecret = created.result.secret as string;
    // Intake has just looked this endpoint up (and keeps it briefly).
    expect((await sendSigned(server, id, oldSecret, { type: 'warm' })).status).toBe(202);

    await previewAndConfirm(`/agent/v1/endpoints/${id}/edit-intents`, { status: 'paused' });
    const paused = await sendSigned(server, id, oldSecret, { type: 'while-paused' });
    expect(paused.status).toBe(423);
    expect(paused.json.code).toBe('endpoint_paused');
    await previewAndConfirm(`/agent/v1/endpoints/${id}/edit-intents`, { status: 'active' });
    expect((await sendSigned(server, id, oldSecret, { type: 'resumed' })).status).toBe(202);

    const rotated = await previewAndConfirm(`/agent/v1/endpoints/${id}/rotate-secret-intents`, { overlap_hours: 0 });
    expect((await sendSigned(server, id, oldSecret, { type: 'old-secret' })).status).toBe(401);
    expect((await sendSigned(server, id, rotated.result.secret, { type: 'new-secret' })).status).toBe(202);

    await previewAndConfirm(`/agent/v1/endpoints/${id}/delete-intents`, { mode: 'archive' });
    const archived = await sendSigned(server, id, rotated.result.secret, { type: 'after-archive' });
    expect(archived.status).toBe(410);
    expect(archived.json.code).toBe('endpoint_gone');
  });

  it('delete: archive first, permanent only from archived, tombstone remains with secrets and bodies cleared', async () => {
    const created = await confirm(
      server,
      token,
      (
        await api(server, token, 'POST', '/agent/v1/endpoints/intents', {
          name: 'Delete me',
          trigger_variant: 'external_event',
          auth_mode: 'hmac_sha256',
        })
      ).json.id,
    );
    const id = created.json.result.endpoint_id;
    const ack = await sendSigned(server, id, created.json.result.secret, { type: 'keep-me' });
    await waitDelivered(server, ack.json.event_id);

    const tooEarly = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/delete-intents`, {
      mode: 'permanent',
    });
    expect(tooEarly.status).toBe(409);
    expect(tooEarly.json.code).toBe('endpoint_not_archived');

    const archive = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/delete-intents`, { mode: 'archive' });
    expect(archive.status).toBe(201);
    expect((await confirm(server, token, archive.json.id)).json.result.status).toBe('archived');

    const permanent = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/delete-intents`, {
      mode: 'permanent',
    });
    expect(permanent.status).toBe(201);
    expect(permanent.json.preview.details.will_be_lost.retained_bodies).toBe(1);
    // The sender keeps retrying against the archived endpoint; each refusal leaves a receipt. That changes
    // nothing the delete destroys, so the preview still holds (a retrying sender must not block the delete).
    await recordRefusedRetry(id);
    const done = await confirm(server, token, permanent.json.id);
    expect(done.status, done.text).toBe(200);
    expect(done.json.result).toMatchObject({ status: 'deleted', purged_bodies: 1, tombstone: true });
    const row = await db().get<{ deleted_at: number | null; secret_enc: string | null; name: string }>(
      'SELECT deleted_at, secret_enc, name FROM endpoints WHERE id = ?',
      [id],
    );
    expect(row?.deleted_at).not.toBeNull();
    expect(row?.secret_enc).toBeNull();
    expect(row?.name).toBe('Delete me');
    const ev = await db().get<{ body: string | null }>('SELECT body FROM events WHERE id = ?', [ack.json.event_id]);
    expect(ev?.body).toBeNull();
  });
});

describe('alert subscribe and unsubscribe', () => {
  it('subscribing adds a listed subscription; unsubscribing removes it (listed as removed, URL and secret destroyed)', async () => {
    const sub = await api(server, token, 'POST', '/agent/v1/alert-subscription-intents', {
      channel: 'slack',
      url: 'http://127.0.0.1:9/each-kind',
      note: 'each kind',
    });
    expect(sub.status, sub.text).toBe(201);
    expect(sub.json).toMatchObject({ kind: 'alert_subscribe', target: { type: 'shop' } });
    const subscribed = await confirm(server, token, sub.json.id);
    expect(subscribed.status, subscribed.text).toBe(200);
    const id = subscribed.json.result.subscription_id as string;
    const listed = await api(server, token, 'GET', '/agent/v1/alert-subscriptions');
    expect(listed.json.data.find((x: { id: string }) => x.id === id)).toMatchObject({
      channel: 'slack',
      origin: 'http://127.0.0.1:9',
      note: 'each kind',
      status: 'active',
    });

    const preview = await api(server, token, 'POST', `/agent/v1/alert-subscriptions/${id}/unsubscribe-intents`, {});
    expect(preview.status, preview.text).toBe(201);
    expect(preview.json).toMatchObject({
      kind: 'alert_unsubscribe',
      state: 'previewed',
      target: { type: 'alert_subscription', id },
      required_scope: 'alert_unsubscribe:execute',
    });
    expect(preview.json.preview.target).toMatchObject({ id, status: 'active' });
    const done = await confirm(server, token, preview.json.id);
    expect(done.status, done.text).toBe(200);
    expect(done.json).toMatchObject({ state: 'executed', result: { subscription_id: id, cancelled_messages: 0 } });
    const row = await db().get<{ removed_at: unknown; url_enc: string; secret_enc: unknown }>(
      'SELECT removed_at, url_enc, secret_enc FROM alert_subscriptions WHERE id = ?',
      [id],
    );
    expect(row?.removed_at).not.toBeNull();
    expect(row?.url_enc).toBe('');
    expect(row?.secret_enc).toBeNull();
    const active = await api(server, token, 'GET', '/agent/v1/alert-subscriptions');
    expect(active.json.data.map((x: { id: string }) => x.id)).not.toContain(id);
    const removed = await api(server, token, 'GET', '/agent/v1/alert-subscriptions?status=removed');
    expect(removed.json.data.find((x: { id: string }) => x.id === id)).toMatchObject({ status: 'removed' });
  });
});
