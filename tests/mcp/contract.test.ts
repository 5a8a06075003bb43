// Must show 2: the tool list is the registry (adding an operation adds its
// tool), each tool is described from its operation, and structured output
// validates against the same schema as the HTTP response (and equals it).
import { createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { z } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpOperations, mcpToolDefinitions, toolAnnotations } from '../../api/src/mcp/tools.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { DEFAULT_HMAC } from '../../api/src/services/endpoints.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { FIXTURE_OPERATIONS, fixtureSite } from './fixtures.ts';
import { type ConnectedClient, connectModern, type ListedTool } from './helpers.ts';

const operations = [...OPERATIONS, ...FIXTURE_OPERATIONS];
let server: TestServer;
let client: ConnectedClient;
let listed: ListedTool[];
let siteDir = '';

beforeAll(async () => {
  server = await startTestServer({
    worker: false,
    operations,
    configure: (c) => {
      siteDir = fixtureSite(c.publicUrl);
      return { ...c, siteDir };
    },
  });
  client = await connectModern(server.url, server.sandbox?.grant_token as string);
  listed = (await client.listTools()).tools;
});
afterAll(async () => {
  await client?.close();
  await server?.close();
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

describe('tool list = registry', () => {
  it('has one tool per operation with `mcp`, and nothing else', () => {
    expect(listed.map((t) => t.name).sort()).toEqual(
      mcpOperations(operations)
        .map((op) => op.mcp?.name)
        .sort(),
    );
  });

  it('adding an operation adds its tool (the test-only operations are listed)', () => {
    for (const op of FIXTURE_OPERATIONS) expect(listed.map((t) => t.name)).toContain(op.mcp?.name);
    expect(mcpOperations(OPERATIONS).map((op) => op.mcp?.name)).not.toContain('confirm_test_fixture');
  });

  it('tool names are unique and valid MCP tool names', () => {
    const names = mcpOperations(OPERATIONS).map((op) => op.mcp?.name as string);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z][a-z0-9_]{2,63}$/);
  });

  it('each listed tool matches mcpToolDefinitions() (what the docs render)', () => {
    const defs = new Map(mcpToolDefinitions(operations).map((d) => [d.name, d]));
    for (const tool of listed) {
      const def = defs.get(tool.name);
      expect(def, tool.name).toBeDefined();
      expect(tool.title).toBe(def?.title);
      expect(tool.description).toBe(def?.description);
      expect(tool.annotations).toMatchObject(def?.annotations as object);
      const { $schema: _a, ...input } = tool.inputSchema;
      const { $schema: _b, ...output } = tool.outputSchema ?? {};
      expect(input).toEqual(def?.inputSchema);
      expect(output).toEqual(def?.outputSchema);
      expect(tool._meta?.['flowport/scope']).toBe(def?.scope);
    }
  });
});

describe('annotations derive from the operation kind', () => {
  it.each(mcpOperations(operations).map((op) => [op.mcp?.name, op] as const))('%s', (_name, op) => {
    const a = toolAnnotations(op);
    if (op.kind === 'read') expect(a).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    else expect(a.readOnlyHint).toBe(false);
    if (op.kind === 'preview') expect(a.destructiveHint).toBe(false);
    if (op.kind === 'execute') expect(a.destructiveHint).toBe(op.destructive ?? false);
    expect(a.openWorldHint).toBe(op.openWorld ?? false);
  });

  it('the destructive fixture is destructive, the confirmation opens the world and is idempotent by key', () => {
    expect(listed.find((t) => t.name === 'delete_test_fixture')?.annotations).toMatchObject({ destructiveHint: true });
    expect(listed.find((t) => t.name === 'confirm_test_fixture')?.annotations).toMatchObject({
      readOnlyHint: false,
      openWorldHint: true,
      idempotentHint: true,
    });
  });
});

// ---- structured output = HTTP response ----

async function ingest(): Promise<{ event_id: string; receipt_id: string }> {
  const creds = server.sandbox;
  if (!creds) throw new Error('no sandbox');
  const body = JSON.stringify({ id: `contract-${randomUUID()}`, order_id: 1001 });
  const sig = createHmac('sha256', creds.signing_secret).update(body).digest('hex');
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [creds.signature_header]: `${DEFAULT_HMAC.prefix}${sig}` },
    body,
  });
  return (await res.json()) as { event_id: string; receipt_id: string };
}

/** Arguments for read tools whose required inputs this fixture can supply; null = cannot call. */
async function sampleArgs(op: AnyOperation): Promise<Record<string, unknown> | null> {
  const samples: Record<string, Record<string, unknown>> = {
    searchDocs: { q: 'scope refused' },
    getDocsPage: { path: '/agent-access/refusals/' },
    getOpenApiOperation: { operationId: 'getManifest' },
  };
  const args: Record<string, unknown> = { ...(samples[op.operationId] ?? {}) };
  const params = (op.request.params?.shape ?? {}) as Record<string, unknown>;
  if ('eventId' in params || 'receiptId' in params) {
    const ack = await ingest();
    if ('eventId' in params) args.eventId = ack.event_id;
    if ('receiptId' in params) args.receiptId = ack.receipt_id;
  }
  if ('endpointId' in params) args.endpointId = server.sandbox?.endpoint_id;
  if ('intentId' in params) {
    // An intent to read: the preview of a test event on the sandbox endpoint, made over HTTP.
    const preview = OPERATIONS.find((o) => o.operationId === 'createTestEventIntent') as AnyOperation;
    const res = await fetch(
      `${server.url}${preview.path.replace('{endpointId}', String(server.sandbox?.endpoint_id))}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${server.sandbox?.grant_token}`, 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(res.status).toBe(preview.successStatus);
    args.intentId = ((await res.json()) as { id: string }).id;
  }
  const required = [op.request.params, op.request.query, op.request.body]
    .filter(Boolean)
    .flatMap((s) => Object.entries((s as z.ZodObject).shape))
    .filter(([, t]) => !(t as z.ZodType).safeParse(undefined).success)
    .map(([k]) => k);
  return required.every((k) => k in args) ? args : null;
}

function httpRequestFor(op: AnyOperation, args: Record<string, unknown>): { url: string; init: RequestInit } {
  const params = Object.keys(op.request.params?.shape ?? {});
  let path = op.path;
  for (const p of params) path = path.replace(`{${p}}`, encodeURIComponent(String(args[p])));
  const rest = Object.entries(args).filter(([k]) => !params.includes(k));
  const headers: Record<string, string> = { authorization: `Bearer ${server.sandbox?.grant_token}` };
  if (op.method === 'get') {
    const qs = new URLSearchParams(rest.map(([k, v]) => [k, String(v)] as [string, string])).toString();
    return { url: `${server.url}${path}${qs ? `?${qs}` : ''}`, init: { headers } };
  }
  return {
    url: `${server.url}${path}`,
    init: {
      method: op.method.toUpperCase(),
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify(Object.fromEntries(rest)),
    },
  };
}

/** Fields that legitimately differ between two calls (time, request ids, usage counters). */
function stable(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (k, v) =>
      /(^|_)(at|request_id|used|remaining|count|last_used|minute|month|uses|in_s)$/.test(k) ? '<volatile>' : v,
    ),
  );
}

describe('structured output validates against the HTTP response schema', () => {
  const reads = mcpOperations(OPERATIONS).filter((op) => op.kind === 'read');
  it.each(reads.map((op) => [op.mcp?.name, op] as const))('%s', async (_name, op) => {
    const tool = listed.find((t) => t.name === op.mcp?.name);
    // The advertised output schema is the HTTP response schema.
    const { $schema: _s, ...advertised } = tool?.outputSchema ?? {};
    const { $schema: _t, ...fromHttpSchema } = z.toJSONSchema(op.response, {
      io: 'output',
      unrepresentable: 'any',
    }) as Record<string, unknown>;
    expect(advertised).toEqual(fromHttpSchema);

    const args = await sampleArgs(op);
    if (args === null) {
      console.log(`[mcp contract] ${op.mcp?.name}: no fixture for its required inputs; schema equality checked only`);
      return;
    }
    const result = await client.callTool(op.mcp?.name as string, args);
    if (result.isError) throw new Error(`${op.mcp?.name} failed: ${result.content[0]?.text}`);
    expect(op.response.safeParse(result.structuredContent).success).toBe(true);

    const { url, init } = httpRequestFor(op, args);
    const res = await fetch(url, init);
    expect(res.status).toBe(op.successStatus ?? 200);
    const http = await res.json();
    expect(op.response.safeParse(http).success).toBe(true);
    expect(stable(result.structuredContent)).toEqual(stable(http));
  });
});
