// Issue 23 point 1: unknown input is refused, never ignored. Every operation refuses one
// unknown query parameter, every operation with a body one unknown body field (a property
// test over the registry), over real HTTP and over MCP with both SDK generations; the
// refusal names the field and, when a defined name is close, the name it probably meant.
// The OpenAPI request bodies and the MCP input schemas are closed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mcpToolDefinitions } from '../../api/src/mcp/tools.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api } from '../intents/helpers.ts';
import {
  type ConnectedClient,
  connectLegacy,
  connectModern,
  INITIALIZE_2025,
  problemOf,
  rawMcpPost,
} from '../mcp/helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

type Json = Record<string, unknown>;
const doc = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../openapi/agent-operations.openapi.json'), 'utf8'),
) as Json & { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } };

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

/** The operation's path with its parameters filled (ids that need not exist: the check runs first). */
function pathOf(op: AnyOperation): string {
  const ids: Record<string, string> = {
    event_id: 'evt_01jd0000000000000000000000',
    endpoint_id: server.sandbox?.endpoint_id as string,
    receipt_id: 'rcpt_01jd0000000000000000000000',
    intent_id: 'int_01jd0000000000000000000000',
    operation_id: 'listEvents',
  };
  return op.path.replace(/\{(\w+)\}/g, (_w, name: string) => ids[name] ?? 'x');
}

function expectUnknown(r: { status: number; json: Json }, path: string, didYouMean: string | null) {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.code).toBe('unknown_field');
  const fields = r.json.unknown_fields as { path: string; did_you_mean: string | null }[];
  expect(fields.map((f) => f.path)).toContain(path);
  expect(fields.find((f) => f.path === path)?.did_you_mean).toBe(didYouMean);
  expect((r.json.errors as { path: string }[]).map((e) => e.path)).toContain(path);
  expect(r.json.detail).toContain(`\`${path}\``);
  if (didYouMean) expect(r.json.detail).toContain(`Did you mean \`${didYouMean}\`?`);
}

describe('HTTP: every operation refuses unknown input', () => {
  it('one unknown query parameter, on every operation', async () => {
    for (const op of OPERATIONS) {
      const r = await api(server, token, op.method.toUpperCase(), `${pathOf(op)}?zz_not_a_field=1`, undefined, {
        'idempotency-key': 'closed-input-test',
      });
      expectUnknown(r, 'zz_not_a_field', null);
    }
  });

  it('one unknown body field, on every operation that takes a POST', async () => {
    const posts = OPERATIONS.filter((op) => op.method === 'post');
    expect(posts.length).toBeGreaterThan(5);
    for (const op of posts) {
      const r = await api(server, token, 'POST', pathOf(op), { zz_not_a_field: 1 }, { 'idempotency-key': 'k-1' });
      expectUnknown(r, 'zz_not_a_field', null);
    }
  });

  it('a misspelt body field names what it probably meant, and nothing changes', async () => {
    const endpoint = server.sandbox?.endpoint_id as string;
    const r = await api(server, token, 'POST', `/agent/v1/endpoints/${endpoint}/edit-intents`, { nmae: 'x' });
    expectUnknown(r, 'nmae', 'name');
    const intents = await api(server, token, 'GET', '/agent/v1/action-intents');
    expect(intents.status).toBe(200);
    expect((intents.json.data as unknown[]).length).toBe(0);
  });

  it('case and separator variants are recognised, in nested objects too', async () => {
    const endpoint = server.sandbox?.endpoint_id as string;
    const r = await api(server, token, 'POST', `/agent/v1/endpoints/${endpoint}/edit-intents`, {
      senderLabel: 'x',
      hmac: { Header: 'x-sig' },
    });
    expectUnknown(r, 'senderLabel', 'sender_label');
    expectUnknown(r, 'hmac.Header', 'hmac.header');
    const q = await api(server, token, 'GET', '/agent/v1/events?endpointId=ep_x');
    expectUnknown(q, 'endpointId', 'endpoint_id');
  });

  it('free-form values stay free-form (a test event payload takes any field)', async () => {
    const endpoint = server.sandbox?.endpoint_id as string;
    const r = await api(server, token, 'POST', `/agent/v1/endpoints/${endpoint}/test-event-intents`, {
      payload: { anything: 1, nested: { goes: true } },
    });
    expect(r.status, r.text).toBe(201);
  });

  it('a public operation refuses unknown input without a grant', async () => {
    const res = await fetch(`${server.url}/agent/v1/manifest?verbose=1`);
    const body = (await res.json()) as Json;
    expectUnknown({ status: res.status, json: body }, 'verbose', null);
  });
});

describe('the contract says so', () => {
  const deref = (s: Json): Json => {
    let cur = s;
    for (let i = 0; typeof cur.$ref === 'string' && i < 20; i++)
      cur = doc.components.schemas[(cur.$ref as string).replace('#/components/schemas/', '')] as Json;
    return cur;
  };
  /** Every object schema reachable from `s` that has properties but does not close them. */
  function openObjects(s: Json, at: string, seen = new Set<Json>()): string[] {
    const cur = deref(s);
    if (seen.has(cur)) return [];
    seen.add(cur);
    const out: string[] = [];
    if (cur.properties && cur.additionalProperties !== false) out.push(at);
    for (const [k, v] of Object.entries((cur.properties ?? {}) as Record<string, Json>))
      out.push(...openObjects(v, `${at}.${k}`, seen));
    for (const key of ['anyOf', 'oneOf', 'allOf'])
      for (const [i, v] of ((cur[key] ?? []) as Json[]).entries())
        out.push(...openObjects(v, `${at}/${key}[${i}]`, seen));
    if (cur.items) out.push(...openObjects(cur.items as Json, `${at}[]`, seen));
    return out;
  }

  it('every OpenAPI request body is closed (additionalProperties: false, at every depth)', () => {
    let bodies = 0;
    for (const op of OPERATIONS) {
      const body = (doc.paths[op.path]?.[op.method]?.requestBody as Json | undefined)?.content as
        | Record<string, { schema: Json }>
        | undefined;
      if (!body) continue;
      bodies++;
      expect(openObjects(body['application/json']?.schema as Json, op.operationId)).toEqual([]);
    }
    expect(bodies).toBeGreaterThan(5);
  });

  it('every operation lists unknown_field among its error codes', () => {
    for (const op of OPERATIONS)
      expect(doc.paths[op.path]?.[op.method]?.['x-flowport-error-codes'], op.operationId).toContain('unknown_field');
  });

  it('every MCP tool input schema is closed', () => {
    for (const tool of mcpToolDefinitions()) {
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
    }
  });
});

describe('MCP: the same refusal with both SDK generations', () => {
  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: an unknown argument is refused with unknown_field and a suggestion`, async () => {
      const connect = era === 'modern' ? connectModern : connectLegacy;
      const client: ConnectedClient = await connect(server.url, token);
      try {
        const result = await client.callTool('list_events', { endpointId: 'ep_x' });
        expect(result.isError).toBe(true);
        const problem = problemOf(result);
        expect(problem.code).toBe('unknown_field');
        expect(problem.unknown_fields).toEqual([
          { location: 'arguments', path: 'endpointId', did_you_mean: 'endpoint_id' },
        ]);
      } finally {
        await client.close();
      }
    });

    it(`${era}: a path parameter under its old camelCase name is refused and the snake_case name suggested`, async () => {
      const connect = era === 'modern' ? connectModern : connectLegacy;
      const client: ConnectedClient = await connect(server.url, token);
      try {
        const cases: [string, Json, string, string][] = [
          ['get_event', { eventId: 'evt_01jd0000000000000000000000' }, 'eventId', 'event_id'],
          ['get_endpoint', { endpointId: server.sandbox?.endpoint_id as string }, 'endpointId', 'endpoint_id'],
          ['get_receipt', { receiptId: 'rcpt_01jd0000000000000000000000' }, 'receiptId', 'receipt_id'],
          ['get_action_intent', { intentId: 'int_01jd0000000000000000000000' }, 'intentId', 'intent_id'],
          ['get_open_api_operation', { operationId: 'listEvents' }, 'operationId', 'operation_id'],
        ];
        for (const [tool, args, path, didYouMean] of cases) {
          const problem = problemOf(await client.callTool(tool, args));
          expect(problem.code, `${tool}: ${JSON.stringify(problem)}`).toBe('unknown_field');
          expect(problem.unknown_fields).toEqual([{ location: 'arguments', path, did_you_mean: didYouMean }]);
        }
      } finally {
        await client.close();
      }
    });
  }
});

describe('`__proto__` and `constructor` are names like any other: refused as unknown, never ignored', () => {
  const evil = () => JSON.parse('{"__proto__":{"x":1},"constructor":1}') as Json;
  const paths = (r: { json: Json }) => ((r.json.unknown_fields ?? []) as { path: string }[]).map((f) => f.path).sort();

  it('HTTP: as query parameters and as body fields', async () => {
    for (const q of ['__proto__=1', 'constructor=1', '__proto__%5Bx%5D=1']) {
      const r = await api(server, token, 'GET', `/agent/v1/events?${q}`);
      expect(r.status, `${q}: ${r.text}`).toBe(400);
      expect(r.json.code).toBe('unknown_field');
    }
    const r = await api(server, token, 'GET', '/agent/v1/events?__proto__=1&constructor=2');
    expect(paths(r)).toEqual(['__proto__', 'constructor']);
    const post = OPERATIONS.find((op) => op.method === 'post') as AnyOperation;
    const b = await api(server, token, 'POST', pathOf(post), evil(), { 'idempotency-key': 'k-proto' });
    expect(b.status, b.text).toBe(400);
    expect(paths(b)).toEqual(['__proto__', 'constructor']);
  });

  it('MCP: list_events (and every tool) refuses the arguments by name', async () => {
    const headers = { authorization: `Bearer ${token}` };
    await (await rawMcpPost(server.url, INITIALIZE_2025, headers)).text();
    const tools = OPERATIONS.filter((op) => op.mcp).map((op) => op.mcp?.name as string);
    expect(tools).toContain('list_events');
    for (const name of tools) {
      const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: evil() } };
      const res = await rawMcpPost(server.url, call, { ...headers, 'mcp-protocol-version': '2025-11-25' });
      const text = await res.text();
      const line = text.split('\n').find((l) => l.startsWith('data: '));
      const msg = JSON.parse(line ? line.slice(6) : text) as {
        result: { content: { text: string }[]; isError: boolean };
      };
      expect(msg.result?.isError, `${name}: ${text.slice(0, 300)}`).toBe(true);
      const problem = JSON.parse(msg.result.content[0]?.text ?? '{}') as Json;
      expect(problem.code, `${name}: ${JSON.stringify(problem).slice(0, 300)}`).toBe('unknown_field');
      expect(paths({ json: problem }), name).toEqual(['__proto__', 'constructor']);
    }
  });
});
