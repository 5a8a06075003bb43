// Must show 2: the tool list is the registry (adding an operation adds its
// tool), each tool is described from its operation, and structured output
// validates against the same schema as the HTTP response (and equals it).
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpOperations, mcpToolDefinitions, toolAnnotations } from '../../api/src/mcp/tools.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { DEFAULT_HMAC } from '../../api/src/services/endpoints.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { FIXTURE_OPERATIONS, fixtureSite } from './fixtures.ts';
import { type ConnectedClient, connectModern, type ListedTool } from './helpers.ts';

const operations = [...OPERATIONS, ...FIXTURE_OPERATIONS];

type Json = Record<string, unknown>;
const committed = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../openapi/agent-operations.openapi.json'), 'utf8'),
) as Json & {
  paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, { schema: Json }> }> }>>;
};

/** The success response schema of an operation in the committed OpenAPI document. */
function openApiResponseSchema(op: AnyOperation): Json {
  const schema =
    committed.paths[op.path]?.[op.method]?.responses[String(op.successStatus ?? 200)]?.content['application/json']
      ?.schema;
  if (!schema) throw new Error(`no response schema for ${op.operationId}`);
  return schema;
}

/** A schema with every local reference (`prefix` + name) replaced by what it names, `$defs` dropped. */
function inline(node: unknown, root: Json, prefix: string, depth = 0): any {
  if (depth > 40) return node;
  if (Array.isArray(node)) return node.map((n) => inline(n, root, prefix, depth + 1));
  if (node === null || typeof node !== 'object') return node;
  const obj = node as Json;
  if (typeof obj.$ref === 'string' && obj.$ref.startsWith(prefix)) {
    const name = obj.$ref.slice(prefix.length);
    const defs = (prefix === '#/$defs/' ? root.$defs : (root.components as Json).schemas) as Json;
    return inline(defs[name], root, prefix, depth + 1);
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(obj)) if (k !== '$defs') out[k] = inline(v, root, prefix, depth + 1);
  return out;
}
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
      expect(input).toEqual(def?.inputSchema);
      // The output shape is not listed (ADR 0510): the tool names where it is read.
      expect(tool.outputSchema).toBeUndefined();
      expect(tool._meta?.['flowport/output_schema']).toBe(`${server.url}${def?.output_schema_path}`);
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
    // Only an execution can reach Shopify Flow; a preview records an intent and reaches nothing outside.
    expect(a.openWorldHint).toBe(op.kind === 'execute' && (op.openWorld ?? false));
  });

  it('previews never claim the open world; cancel is idempotent; confirm opens the world (issue 23)', () => {
    const byName = (n: string) => listed.find((t) => t.name === n)?.annotations;
    expect(byName('preview_test_event')).toMatchObject({ openWorldHint: false, idempotentHint: false });
    expect(byName('cancel_action_intent')).toMatchObject({ idempotentHint: true, destructiveHint: false });
    expect(byName('confirm_action_intent')).toMatchObject({ openWorldHint: true, idempotentHint: true });
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
    getOpenApiOperation: { operation_id: 'getManifest' },
  };
  const args: Record<string, unknown> = { ...(samples[op.operationId] ?? {}) };
  const params = (op.request.params?.shape ?? {}) as Record<string, unknown>;
  if ('event_id' in params || 'receipt_id' in params) {
    const ack = await ingest();
    if ('event_id' in params) args.event_id = ack.event_id;
    if ('receipt_id' in params) args.receipt_id = ack.receipt_id;
  }
  if ('endpoint_id' in params) args.endpoint_id = server.sandbox?.endpoint_id;
  if ('intent_id' in params) {
    // An intent to read: the preview of a test event on the sandbox endpoint, made over HTTP.
    const preview = OPERATIONS.find((o) => o.operationId === 'previewTestEvent') as AnyOperation;
    const res = await fetch(
      `${server.url}${preview.path.replace('{endpoint_id}', String(server.sandbox?.endpoint_id))}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${server.sandbox?.grant_token}`, 'content-type': 'application/json' },
        body: '{}',
      },
    );
    expect(res.status).toBe(preview.successStatus);
    args.intent_id = ((await res.json()) as { id: string }).id;
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
      /(^|_)(at|as_of|request_id|used|remaining|count|last_used|minute|month|uses|in_s)$/.test(k) ? '<volatile>' : v,
    ),
  );
}

describe('structured output validates against the HTTP response schema', () => {
  const reads = mcpOperations(OPERATIONS).filter((op) => op.kind === 'read');
  it.each(reads.map((op) => [op.mcp?.name, op] as const))('%s', async (_name, op) => {
    // The output schema (the shape tools/list points at, ADR 0510) is the committed OpenAPI
    // response schema (same openness, same formats).
    const advertised = mcpToolDefinitions(operations).find((d) => d.name === op.mcp?.name)?.outputSchema ?? {};
    const inlinedTool = inline(advertised, advertised, '#/$defs/');
    const fromContract = inline(openApiResponseSchema(op), committed, '#/components/schemas/');
    expect(inlinedTool).toEqual(fromContract.type === undefined ? { type: 'object', ...fromContract } : fromContract);
    // Same openness and formats as the contract (today's drift: closed objects, dropped date-time formats).
    const text = JSON.stringify(inlinedTool);
    const contractText = JSON.stringify(fromContract);
    expect(text.split('"additionalProperties":false').length).toBe(
      contractText.split('"additionalProperties":false').length,
    );
    expect(text.split('"format":"date-time"').length).toBe(contractText.split('"format":"date-time"').length);

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

describe('the MCP reference page is rendered from the live tool definitions (issue 23)', () => {
  it('states each tool’s annotations and inputs as tools/list does, idempotency_key and idempotentHint included', async () => {
    const { mcpFamilies, renderMcpFamily } = await import('../../scripts/docs/lib/registry-pages.ts');
    const pages = mcpFamilies(OPERATIONS).map((family) => renderMcpFamily(OPERATIONS, family));
    const section = (name: string) => {
      const page = pages.find((p) => p.includes(`## ${name}\n`)) ?? '';
      const start = page.indexOf(`## ${name}\n`);
      const end = page.indexOf('\n## ', start + 1);
      return start === -1 ? '' : page.slice(start, end === -1 ? undefined : end);
    };
    for (const tool of listed.filter((t) => OPERATIONS.some((op) => op.mcp?.name === t.name))) {
      const text = section(tool.name);
      expect(text, tool.name).not.toBe('');
      for (const [k, v] of Object.entries(tool.annotations ?? {}))
        if (k !== 'title') expect(text, `${tool.name} ${k}`).toContain(`\`${k}: ${v}\``);
      for (const field of Object.keys((tool.inputSchema.properties ?? {}) as object))
        expect(text, `${tool.name} input ${field}`).toContain(`\`${field}\``);
    }
    const confirmSection = section('confirm_action_intent');
    expect(confirmSection).toContain('`idempotency_key`');
    expect(confirmSection).toContain('`idempotentHint: true`');
  });
});
