// The OpenAPI document's request examples (what Scalar's "Test Request" pre-fills) are bodies a
// user would send: sent as they are to the real product, each preview is accepted. No example
// carries a field the product refuses (payload_override) or pre-sets a safety acknowledgement
// (acknowledge_recent_delivery): a replay of an event delivered a moment ago is refused for that
// reason alone, and the user decides. Tags read as titles; Scalar's validation passes (see
// api/src/http/openapi-polish.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../api/src/http/openapi.ts';
import { FAMILY_LABELS } from '../../api/src/operations/families.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

type Json = Record<string, any>;
const doc = buildOpenApiDocument() as unknown as Json;
let server: TestServer;
let eventId: string;
let subscriptionId: string;

beforeAll(async () => {
  server = await startTestServer();
  const creds = server.sandbox!;
  const sig = /(x-flowport-signature: [^']+)/.exec(creds.curl)?.[1]?.split(': ')[1] as string;
  const body = JSON.stringify({ type: 'order.paid', id: 'examples_1', order_id: 1 });
  const { createHmac } = await import('node:crypto');
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [creds.signature_header]: `sha256=${createHmac('sha256', creds.signing_secret).update(body).digest('hex')}`,
    },
    body,
  });
  expect(sig).toBeDefined();
  expect(res.status).toBe(202);
  eventId = ((await res.json()) as { event_id: string }).event_id;
  // An alert subscription to remove (sandbox mode allows a receiver on this machine).
  const call = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
    (await (
      await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${creds.grant_token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    ).json()) as { id: string; result: { subscription_id: string } };
  const subscribe = await call('/agent/v1/alert-subscription-intents', {
    channel: 'slack',
    url: 'http://127.0.0.1:9/x',
  });
  subscriptionId = (
    await call(`/agent/v1/action-intents/${subscribe.id}/confirm`, undefined, {
      'idempotency-key': 'examples-subscribe',
    })
  ).result.subscription_id;
  // Delivered a moment ago: the case where a replay needs the user's acknowledgement.
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${server.url}/agent/v1/events/${eventId}`, {
      headers: { authorization: `Bearer ${creds.grant_token}` },
    });
    if (((await r.json()) as { state: string }).state === 'delivered') break;
    await new Promise((r) => setTimeout(r, 50));
  }
});

afterAll(async () => {
  await server?.close();
});

function examples(): { operationId: string; method: string; path: string; example: Json }[] {
  const out = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const example = op.requestBody?.content?.['application/json']?.example;
      if (example !== undefined) out.push({ operationId: op.operationId, method, path, example });
    }
  }
  return out;
}

describe('request examples in the OpenAPI document', () => {
  it('every JSON request body has an example, without refused fields or pre-set acknowledgements', () => {
    const all = examples();
    expect(all.map((e) => e.operationId)).toEqual(
      expect.arrayContaining(['previewReplay', 'previewEndpointCreate', 'previewTestEvent']),
    );
    for (const e of all) {
      expect(e.example, e.operationId).not.toHaveProperty('payload_override');
      expect(e.example, e.operationId).not.toHaveProperty('acknowledge_recent_delivery');
    }
  });

  it('sent as they are, each preview is accepted (a replay of a just-delivered event waits for the acknowledgement)', async () => {
    const creds = server.sandbox!;
    const params: Record<string, string> = {
      event_id: eventId,
      endpoint_id: creds.endpoint_id,
      subscription_id: subscriptionId,
    };
    for (const e of examples()) {
      const url = e.path.replace(/\{(\w+)\}/g, (_m, name: string) => params[name] as string);
      const res = await fetch(`${server.url}${url}`, {
        method: e.method.toUpperCase(),
        headers: { authorization: `Bearer ${creds.grant_token}`, 'content-type': 'application/json' },
        body: JSON.stringify(e.example),
      });
      const body = (await res.json()) as Json;
      if (e.operationId === 'previewReplay' && res.status !== 201) {
        expect(body.code, e.operationId).toBe('replay_recent_delivery');
        continue;
      }
      // This fresh shop has no failed event: a bulk replay finds nothing to replay, and says so.
      if (e.operationId === 'previewBulkReplay' && res.status !== 201) {
        expect(body.code, e.operationId).toBe('bulk_replay_no_events');
        continue;
      }
      expect([res.status, body.code], `${e.operationId} ${JSON.stringify(e.example)}`).toEqual([201, undefined]);
    }
  });

  it('tags are declared with titles in the registry order', () => {
    const tags = doc.tags as { name: string; 'x-displayName': string }[];
    expect(tags.map((t) => t.name)).toEqual(['docs', 'account', 'setup', 'events', 'recovery']);
    for (const t of tags) expect(t['x-displayName']).toBe(FAMILY_LABELS[t.name as keyof typeof FAMILY_LABELS]);
  });

  it('has no empty-object additionalProperties and no untyped anyOf of one type (Scalar rejects both)', () => {
    const found: string[] = [];
    const walk = (n: unknown, at: string) => {
      if (Array.isArray(n)) {
        for (const [i, v] of n.entries()) walk(v, `${at}/${i}`);
        return;
      }
      if (typeof n !== 'object' || n === null) return;
      const o = n as Json;
      if (
        o.additionalProperties &&
        typeof o.additionalProperties === 'object' &&
        !Object.keys(o.additionalProperties).length
      )
        found.push(`${at}: additionalProperties {}`);
      if (
        Array.isArray(o.anyOf) &&
        o.type === undefined &&
        o.anyOf.every((b: Json) => b.type === o.anyOf[0].type && b.type)
      )
        found.push(`${at}: anyOf without type`);
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    walk(doc, '');
    expect(found).toEqual([]);
  });
});
