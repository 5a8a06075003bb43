// Issue 24 point 1: a NUL (or another control character where it makes no sense) never becomes a
// 500. PostgreSQL refuses U+0000 in any text value; Flowport refuses it first, at validation, with
// 400 and a catalogued code, on every operation over HTTP and MCP, so both stores give the same
// answer. At intake an event whose external id or event type holds one is refused with a receipt;
// a NUL elsewhere in the body is stored (escaped in the raw body) and read back. Runs on both stores.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { type ConnectedClient, connectModern, problemOf } from '../mcp/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { newEndpoint } from '../intake/helpers.ts';

let s: TestServer;
let token: string;
let mcp: ConnectedClient;
const REFUSED = new Set(['invalid_characters', 'invalid_request']);

beforeAll(async () => {
  s = await startTestServer({ worker: false });
  token = s.sandbox?.grant_token as string;
  mcp = await connectModern(s.url, token);
});
afterAll(async () => {
  await mcp?.close();
  await s?.close();
});

/** Hostile strings: NUL alone, inside, at the ends, repeated, after an id prefix; other C0 controls and DEL. */
const HOSTILE = [
  '\u0000',
  'a\u0000b',
  '\u0000abc',
  'abc\u0000',
  '\u0000\u0000\u0000',
  'evt_\u0000',
  'ep_01jd0000000000000000000000\u0000',
  '\u0001',
  'a\u0008b',
  'x\u001b[31m',
  'a\u001fb',
  'a\u007fb',
];

const auth = () => ({ authorization: `Bearer ${token}` });

async function problem(r: Response) {
  const text = await r.text();
  try {
    return { status: r.status, code: (JSON.parse(text) as { code?: string }).code ?? '', text };
  } catch {
    return { status: r.status, code: '', text };
  }
}

const counts = { http: 0, mcp: 0, intake: 0 };

describe('HTTP: every path id and query filter of every GET operation', () => {
  const gets = OPERATIONS.filter((op) => op.method === 'get');
  for (const op of gets) {
    const params = Object.keys(op.request.params?.shape ?? {});
    const query = Object.keys(op.request.query?.shape ?? {}).filter((k) => !['limit', 'cursor'].includes(k));
    if (params.length === 0 && query.length === 0) continue;
    it(`${op.operationId}: ${[...params, ...query].join(', ')} → 400, never 5xx`, async () => {
      const seen = new Set<string>();
      for (const bad of HOSTILE) {
        const targets = [...params.map((p) => ({ p, kind: 'param' })), ...query.map((p) => ({ p, kind: 'query' }))];
        for (const t of targets) {
          let path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
            encodeURIComponent(name === t.p && t.kind === 'param' ? bad : 'x'),
          );
          if (t.kind === 'query') path += `?${t.p}=${encodeURIComponent(bad)}`;
          const r = await problem(await fetch(`${s.url}${path}`, { headers: auth() }));
          counts.http++;
          expect(r.status, `${path}: ${r.text.slice(0, 200)}`).toBe(400);
          expect(REFUSED.has(r.code), r.code).toBe(true);
          seen.add(r.code);
        }
      }
      // Free-text filters (not shaped like an id or an enum) reach the shared check itself.
      expect(seen.size).toBeGreaterThan(0);
    });
  }
});

describe('HTTP: previews whose confirmation used to fail on PostgreSQL', () => {
  const ep = () => s.sandbox?.endpoint_id as string;
  const cases = (): { name: string; path: string; body: Record<string, unknown> }[] => [
    ...HOSTILE.map((bad) => ({
      name: 'endpoint create name',
      path: '/agent/v1/endpoints/intents',
      body: { name: bad, trigger_variant: 'external_event', auth_mode: 'hmac_sha256' },
    })),
    ...HOSTILE.map((bad) => ({
      name: 'endpoint create sender_label',
      path: '/agent/v1/endpoints/intents',
      body: { name: 'ok', sender_label: bad, trigger_variant: 'external_event', auth_mode: 'hmac_sha256' },
    })),
    ...HOSTILE.map((bad) => ({
      name: 'endpoint edit name',
      path: `/agent/v1/endpoints/${ep()}/edit-intents`,
      body: { name: bad },
    })),
    ...HOSTILE.map((bad) => ({
      name: 'test event type',
      path: `/agent/v1/endpoints/${ep()}/test-event-intents`,
      body: { event_type: bad },
    })),
    ...HOSTILE.filter((b) => b.includes('\u0000')).map((bad) => ({
      name: 'test event payload value',
      path: `/agent/v1/endpoints/${ep()}/test-event-intents`,
      body: { payload: { note: bad, nested: { deeper: [bad] } } },
    })),
    {
      name: 'test event payload key',
      path: `/agent/v1/endpoints/${ep()}/test-event-intents`,
      body: { payload: { 'k\u0000': 1 } },
    },
  ];
  it('endpoint create and edit names, test event type and payload: 400 invalid_characters, nothing stored', async () => {
    const before = await s.runtime.services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM action_intents');
    for (const c of cases()) {
      const r = await problem(
        await fetch(`${s.url}${c.path}`, {
          method: 'POST',
          headers: { ...auth(), 'content-type': 'application/json' },
          body: JSON.stringify(c.body),
        }),
      );
      counts.http++;
      expect(r.status, `${c.name} ${JSON.stringify(c.body)}: ${r.text.slice(0, 200)}`).toBe(400);
      expect(r.code, c.name).toBe('invalid_characters');
    }
    const after = await s.runtime.services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM action_intents');
    expect(Number(after?.n)).toBe(Number(before?.n));
  });

  it('a control character other than NUL inside a test event payload is a sender body: accepted', async () => {
    const r = await fetch(`${s.url}/agent/v1/endpoints/${ep()}/test-event-intents`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ payload: { note: 'bell \u0007 and tab \t' } }),
    });
    expect(r.status).toBe(201);
  });

  it('paths with a NUL on POST routes (replay, confirm, cancel): 400', async () => {
    for (const bad of HOSTILE) {
      for (const path of [
        `/agent/v1/events/${encodeURIComponent(bad)}/replay-intents`,
        `/agent/v1/action-intents/${encodeURIComponent(bad)}/confirm`,
        `/agent/v1/action-intents/${encodeURIComponent(bad)}/cancel`,
        `/agent/v1/endpoints/${encodeURIComponent(bad)}/delete-intents`,
      ]) {
        const r = await problem(
          await fetch(`${s.url}${path}`, {
            method: 'POST',
            headers: { ...auth(), 'content-type': 'application/json', 'idempotency-key': 'k-1' },
            body: '{}',
          }),
        );
        counts.http++;
        expect(r.status, `${path}: ${r.text.slice(0, 200)}`).toBe(400);
        expect(REFUSED.has(r.code), r.code).toBe(true);
      }
    }
  });
});

describe('routes outside the operations (Shopify app install, merchant page, share links)', () => {
  it('a NUL or control character in a query or path never answers 5xx', async () => {
    const paths = (bad: string) => {
      const v = encodeURIComponent(bad);
      return [
        `/shopify/install?shop=${v}`,
        `/shopify/install?shop=${v}.myshopify.com`,
        `/merchant?shop=${v}`,
        `/merchant/sign-in?shop=${v}`,
        `/shopify/oauth/callback?shop=${v}&code=${v}&state=${v}&hmac=${v}`,
        `/shared/diagnostics/${v}`,
        `/shared/diagnostics/${v}.json`,
        `/in/${v}`,
      ];
    };
    for (const bad of HOSTILE) {
      for (const path of paths(bad)) {
        const r = await fetch(`${s.url}${path}`, { redirect: 'manual' });
        counts.http++;
        await r.arrayBuffer();
        expect(r.status, path).toBeLessThan(500);
      }
    }
  });
});

describe('MCP tools over the same operations', () => {
  it('list_events, get_event, list_audit, list_action_intents, preview_endpoint_create, search_docs: isError 400', async () => {
    const tools = (await mcp.listTools()).tools.map((t) => t.name);
    const calls: [string, (bad: string) => Record<string, unknown>][] = [
      ['list_events', (bad) => ({ event_type: bad })],
      ['get_event', (bad) => ({ event_id: bad })],
      ['list_audit', (bad) => ({ action: bad })],
      ['list_audit', (bad) => ({ target_id: bad })],
      [
        'preview_endpoint_create',
        (bad) => ({ name: bad, trigger_variant: 'external_event', auth_mode: 'hmac_sha256' }),
      ],
    ];
    for (const [tool, args] of calls) {
      expect(tools).toContain(tool);
      for (const bad of HOSTILE) {
        const result = await mcp.callTool(tool, args(bad));
        counts.mcp++;
        expect(result.isError, `${tool} ${JSON.stringify(args(bad))}`).toBe(true);
        const p = problemOf(result);
        expect(REFUSED.has(p.code), `${tool}: ${p.code}`).toBe(true);
      }
    }
  });
});

describe('intake', () => {
  let ep: { id: string; secret: string };
  beforeAll(async () => {
    const created = await newEndpoint(s.runtime.services, s.sandbox?.shop_id as string, {
      authMode: 'hmac_sha256',
      mapping: { externalId: { kind: 'json', path: 'id' }, eventTypePath: 'type' },
    });
    ep = { id: created.endpoint.id, secret: created.secret };
  });
  const sign = (body: string) => `sha256=${createHmac('sha256', ep.secret).update(body).digest('hex')}`;
  const post = (body: string) =>
    fetch(`${s.url}/in/${ep.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-flowport-signature': sign(body) },
      body,
    });

  it('a NUL or control character in the event type or external id: 400 invalid_characters with a receipt', async () => {
    const bodies: string[] = [];
    for (const bad of HOSTILE) {
      bodies.push(JSON.stringify({ type: bad, id: `ok_${Math.random()}` }));
      bodies.push(JSON.stringify({ type: 'order.paid', id: bad }));
    }
    for (const body of bodies) {
      const r = await post(body);
      counts.intake++;
      const p = (await r.json()) as { code: string; request_id: string };
      expect(r.status, body).toBe(400);
      expect(p.code).toBe('invalid_characters');
      const receipt = await s.runtime.services.db.get<{ error_code: string; support_code: string }>(
        'SELECT error_code, support_code FROM receipts WHERE request_id = ?',
        [r.headers.get('x-request-id') as string],
      );
      expect(receipt?.error_code).toBe('invalid_characters');
      expect(receipt?.support_code).toBe('FP-I-MAP');
    }
  });

  it('a NUL elsewhere in the body is stored escaped in the raw body and read back', async () => {
    const body = JSON.stringify({ type: 'order.paid', id: `nul_${Date.now()}`, note: 'a\u0000b', 'k\u0000': [1] });
    const r = await post(body);
    counts.intake++;
    expect(r.status).toBe(202);
    const ack = (await r.json()) as { event_id: string };
    const got = await fetch(`${s.url}/agent/v1/events/${ack.event_id}`, { headers: auth() });
    expect(got.status).toBe(200);
    const row = await s.runtime.services.db.get<{ body: string }>('SELECT body FROM events WHERE id = ?', [
      ack.event_id,
    ]);
    expect(row?.body).toBe(body);
    expect(row?.body).toContain('\\u0000');
    expect(row?.body).not.toContain('\u0000');
  });
});

afterAll(() => {
  console.log(`[hardening] control characters tried: HTTP ${counts.http}, MCP ${counts.mcp}, intake ${counts.intake}`);
});
