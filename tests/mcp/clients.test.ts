// Must show 1: two real clients nobody here wrote — the v2 SDK client on the
// 2026-07-28 revision and the 1.x @modelcontextprotocol/sdk client on the
// 2025 era — list tools and call a read, a preview and a confirmation over
// HTTP against a running Flowport.
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpOperations } from '../../api/src/mcp/tools.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { DEFAULT_HMAC } from '../../api/src/services/endpoints.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { type ConnectedClient, connectLegacy, connectModern, problemOf, type ToolCallResult } from './helpers.ts';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

const tools = mcpOperations(OPERATIONS);
// Prefer the test-event preview (its only input is the sandbox endpoint); otherwise the first preview tool.
const previewOp: AnyOperation | undefined =
  tools.find((op) => op.kind === 'preview' && op.path.includes('test-event')) ??
  tools.find((op) => op.kind === 'preview');
// The confirmation of a previewed intent (execute kind, addressed by intent id).
const confirmOp: AnyOperation | undefined =
  tools.find((op) => op.kind === 'execute' && /confirm/i.test(`${op.operationId} ${op.path}`)) ??
  tools.find((op) => op.kind === 'execute' && op.path.includes('{intent_id}'));

/** Accept one signed event through the sandbox endpoint; returns its id. */
async function ingestEvent(): Promise<string> {
  const creds = server.sandbox;
  if (!creds) throw new Error('sandbox credentials missing');
  const body = JSON.stringify({ id: `mcp-${randomUUID()}`, order_id: 1001, note: 'mcp client test' });
  const sig = createHmac('sha256', creds.signing_secret).update(body).digest('hex');
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [creds.signature_header]: `${DEFAULT_HMAC.prefix}${sig}` },
    body,
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { event_id: string }).event_id;
}

/** Arguments for a tool from the fixtures this server has (path ids and required fields). */
async function argsFor(op: AnyOperation, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const args: Record<string, unknown> = {};
  const fields = { ...(op.request.params?.shape ?? {}), ...(op.request.body?.shape ?? {}) } as Record<string, unknown>;
  if ('event_id' in fields) args.event_id = await ingestEvent();
  if ('endpoint_id' in fields) args.endpoint_id = server.sandbox?.endpoint_id;
  if ((op.headers ?? []).includes('idempotency-key')) args.idempotency_key = `mcp-test-${randomUUID()}`;
  return { ...args, ...extra };
}

function intentIdOf(result: ToolCallResult): string {
  const sc = result.structuredContent as Record<string, unknown>;
  const id = sc.intent_id ?? sc.id ?? (sc.intent as Record<string, unknown> | undefined)?.id;
  expect(typeof id).toBe('string');
  return id as string;
}

function expectOk(result: ToolCallResult) {
  if (result.isError) throw new Error(`tool failed: ${result.content.map((c) => c.text ?? c.uri).join('\n')}`);
  expect(result.structuredContent).toBeTypeOf('object');
  // The JSON is also there as text for clients that ignore structuredContent.
  const text = result.content.find((c) => c.type === 'text')?.text as string;
  expect(JSON.parse(text)).toEqual(result.structuredContent);
}

const eras = [
  { label: 'v2 SDK client, protocol 2026-07-28', connect: connectModern, era: 'modern', version: '2026-07-28' },
  { label: '1.x SDK client, protocol 2025-11-25', connect: connectLegacy, era: 'legacy', version: '2025-11-25' },
] as const;

describe.each(eras)('$label', ({ connect, era, version }) => {
  let client: ConnectedClient;
  beforeAll(async () => {
    client = await connect(server.url, token);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('negotiates its protocol era', () => {
    expect(client.era).toBe(era);
    expect(client.protocolVersion).toBe(version);
  });

  it('lists exactly the registry tools, with input schemas, annotations and where the output shape is', async () => {
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name).sort()).toEqual(tools.map((op) => op.mcp?.name).sort());
    for (const t of listed) {
      expect(t.inputSchema.type).toBe('object');
      // The output shape is a resource (ADR 0510), named in _meta.
      expect(t.outputSchema).toBeUndefined();
      expect(t._meta?.['flowport/output_schema']).toMatch(/\/agent\/v1\/openapi\/operations\/\w+$/);
      expect(typeof t.annotations?.readOnlyHint).toBe('boolean');
    }
  });

  it('calls a read tool (get_manifest)', async () => {
    const result = await client.callTool('get_manifest', {});
    expectOk(result);
    const manifest = result.structuredContent as { product: string; mcp: { url: string }; capabilities: unknown[] };
    expect(manifest.product).toBe('Flowport');
    expect(manifest.mcp.url).toBe(`${server.url}/agent/v1/mcp`);
    expect(manifest.capabilities.length).toBe(OPERATIONS.length);
  });

  it('gets a tool failure as isError with the problem object, not a protocol error', async () => {
    const result = await client.callTool('get_open_api_operation', { operation_id: 'noSuchOperation' });
    expect(result.isError).toBe(true);
    const problem = problemOf(result);
    expect(problem.code).toBe('openapi_operation_not_found');
    expect(problem.docs_url).toBe(`${server.url}/reference/errors/openapi_operation_not_found/`);
    const link = result.content.find((c) => c.type === 'resource_link');
    expect(link?.uri).toBe(`${server.url}/reference/errors/openapi_operation_not_found.md`);
  });

  it(`calls a preview tool (${previewOp?.mcp?.name})`, async () => {
    const op = previewOp as AnyOperation;
    const result = await client.callTool(op.mcp?.name as string, await argsFor(op));
    expectOk(result);
    expect(intentIdOf(result)).toMatch(/^int_/);
  });

  it(`confirms a previewed intent (${confirmOp?.mcp?.name})`, async () => {
    const preview = previewOp as AnyOperation;
    const confirm = confirmOp as AnyOperation;
    const previewed = await client.callTool(preview.mcp?.name as string, await argsFor(preview));
    expectOk(previewed);
    const intentId = intentIdOf(previewed);
    const result = await client.callTool(confirm.mcp?.name as string, await argsFor(confirm, { intent_id: intentId }));
    expectOk(result);
    expect(JSON.stringify(result.structuredContent)).toContain(intentId);
  });
});

it('the registry has the preview and confirmation tools the era checks use', () => {
  expect(previewOp?.mcp?.name).toBe('preview_test_event');
  expect(confirmOp?.mcp?.name).toBe('confirm_action_intent');
});
