// Issue 43 item 7: the MCP tool list fits an agent's context and loses nothing it needs.
// tools/list is at most 48 KB over the wire; every argument is described from the same source
// as its OpenAPI parameter; idempotency_key is required on MCP exactly as the HTTP header is;
// each tool's full output shape stays one read away; an old tool name answers with the new one.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { buildOpenApiDocument } from '../../api/src/http/openapi.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { fixtureSite } from './fixtures.ts';
import {
  type ConnectedClient,
  connectLegacy,
  connectModern,
  type ListedTool,
  problemOf,
  rawMcpPost,
} from './helpers.ts';

type Json = Record<string, any>;
const LIMIT = 48 * 1024;

let server: TestServer;
let siteDir = '';
let modern: ConnectedClient;
let legacy: ConnectedClient;
let listed: ListedTool[];
let listBytes = 0;
const contract = buildOpenApiDocument(OPERATIONS, {}) as Json;

beforeAll(async () => {
  server = await startTestServer({
    worker: false,
    configure: (c) => {
      siteDir = fixtureSite(c.publicUrl);
      return { ...c, siteDir };
    },
  });
  const token = server.sandbox?.grant_token as string;
  const res = await rawMcpPost(
    server.url,
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { authorization: `Bearer ${token}` },
  );
  expect(res.status).toBe(200);
  const text = await res.text();
  listBytes = Buffer.byteLength(text);
  modern = await connectModern(server.url, token);
  legacy = await connectLegacy(server.url, token);
  listed = (await modern.listTools()).tools;
});
afterAll(async () => {
  await modern?.close();
  await legacy?.close();
  await server?.close();
  if (siteDir) rmSync(siteDir, { recursive: true, force: true });
});

const opOf = (tool: string) => OPERATIONS.find((op) => op.mcp?.name === tool) as AnyOperation;

describe('tools/list fits an agent context', () => {
  it(`is at most ${LIMIT / 1024} KB over the wire`, () => {
    console.log(
      `[mcp] tools/list: ${listBytes} bytes (${(listBytes / 1024).toFixed(1)} KB) for ${listed.length} tools`,
    );
    expect(listed.length).toBe(OPERATIONS.filter((op) => op.mcp).length);
    expect(listBytes).toBeLessThanOrEqual(LIMIT);
  });

  it('carries no 400-character date-time pattern: a date-time argument says format date-time', () => {
    const text = JSON.stringify(listed.map((t) => t.inputSchema));
    for (const m of text.matchAll(/"pattern":"((?:[^"\\]|\\.)*)"/g)) expect(m[1]?.length ?? 0).toBeLessThan(100);
    const listEvents = listed.find((t) => t.name === 'list_events') as ListedTool;
    const after = (listEvents.inputSchema.properties as Json).received_after;
    expect(after).toMatchObject({ type: 'string', format: 'date-time' });
  });
});

/** Every property of a JSON schema, at any depth, with its path. */
function properties(schema: Json, path = ''): [string, Json][] {
  const out: [string, Json][] = [];
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Json)) {
    out.push([`${path}${k}`, v]);
    out.push(...properties(v, `${path}${k}.`));
    if (v.items) out.push(...properties(v.items, `${path}${k}[].`));
    for (const alt of [...(v.anyOf ?? []), ...(v.oneOf ?? [])]) out.push(...properties(alt, `${path}${k}.`));
  }
  return out;
}

describe('every argument is described, from the OpenAPI parameter', () => {
  it('each input property at any depth has a description', () => {
    const missing = listed.flatMap((t) =>
      properties(t.inputSchema)
        .filter(([, v]) => typeof v.description !== 'string' || v.description.trim() === '')
        .map(([p]) => `${t.name}.${p}`),
    );
    expect(missing).toEqual([]);
  });

  it('a path or query argument says what its OpenAPI parameter says (list_events.state, list_audit.action …)', () => {
    let compared = 0;
    for (const tool of listed) {
      const op = opOf(tool.name);
      const parameters = (contract.paths[op.path]?.[op.method]?.parameters ?? []) as Json[];
      for (const p of parameters.filter((x) => x.in === 'path' || x.in === 'query')) {
        const prop = (tool.inputSchema.properties as Json)[p.name];
        expect(prop, `${tool.name}.${p.name}`).toBeDefined();
        expect(prop.description, `${tool.name}.${p.name}`).toBe(p.description);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(50);
    const props = (name: string) => listed.find((t) => t.name === name)?.inputSchema.properties as Json;
    expect(props('list_events').state.description).toContain('no_workflow');
    expect(props('list_audit').action.description).toBeTruthy();
  });
});

describe('idempotency_key: required the same way on MCP and HTTP, described once', () => {
  it('confirm_action_intent requires it, with the Idempotency-Key header’s description and limits', () => {
    const op = opOf('confirm_action_intent');
    const header = ((contract.paths[op.path][op.method].parameters ?? []) as Json[]).find(
      (p) => p.in === 'header' && p.name === 'idempotency-key',
    ) as Json;
    expect(header.required).toBe(true);
    const schema = listed.find((t) => t.name === 'confirm_action_intent')?.inputSchema as Json;
    expect(schema.required).toContain('idempotency_key');
    expect(schema.properties.idempotency_key.description).toBe(header.description);
    expect(schema.properties.idempotency_key).toMatchObject({
      minLength: header.schema.minLength,
      maxLength: header.schema.maxLength,
      pattern: header.schema.pattern,
    });
  });
});

describe('nothing an agent needs is lost', () => {
  it('each tool names where its full output shape is, and that resource is the OpenAPI response schema', async () => {
    for (const tool of listed) {
      const uri = tool._meta?.['flowport/output_schema'];
      expect(typeof uri, tool.name).toBe('string');
      const read = await modern.readResource(uri as string);
      const full = JSON.parse(read.contents[0]?.text ?? '{}') as Json;
      const op = opOf(tool.name);
      const expected = contract.paths[op.path][op.method].responses[String(op.successStatus ?? 200)].content[
        'application/json'
      ].schema as Json;
      expect(
        full.operation.responses[String(op.successStatus ?? 200)].content['application/json'].schema,
        tool.name,
      ).toEqual(expected);
      // Every schema the response names comes with it.
      for (const ref of JSON.stringify(full.operation).matchAll(/#\/components\/schemas\/(\w+)/g))
        expect(full.schemas[ref[1] as string], `${tool.name} ${ref[1]}`).toBeDefined();
    }
  });

  it('output shapes are resources, not tools/list entries; results still arrive as structuredContent', async () => {
    for (const tool of listed) expect(tool.outputSchema, tool.name).toBeUndefined();
    const result = await modern.callTool('get_manifest', {});
    expect(result.isError).toBeFalsy();
    expect(Object.keys(result.structuredContent ?? {})).toContain('capabilities');
  });
});

describe('an old tool name answers with the new one', () => {
  // ADR 1000 renamed these; a client written before it gets the new name, not "Tool … not found".
  const RENAMED: [string, string][] = [
    ['read_manifest', 'get_manifest'],
    ['read_docs_page', 'get_docs_page'],
    ['read_grant', 'get_grant'],
    ['read_plan_usage', 'get_plan_usage'],
    ['read_setup', 'get_setup'],
    ['read_diagnostics', 'get_diagnostics'],
    ['lookup_api_operation', 'get_open_api_operation'],
    ['preview_event_replay', 'preview_replay'],
    ['preview_secret_rotation', 'preview_secret_rotate'],
  ];
  it.each(RENAMED)('%s → %s', async (old, now) => {
    for (const client of [modern, legacy]) {
      const result = await client.callTool(old, {});
      expect(result.isError, `${client.era} ${old}`).toBe(true);
      const problem = problemOf(result);
      expect(problem.code).toBe('tool_renamed');
      expect(problem.detail).toContain(`\`${now}\``);
      expect(problem.new_name).toBe(now);
      expect(problem.docs_url).toContain('/reference/errors/tool_renamed/');
    }
  });

  it('the old names are not listed', () => {
    for (const [old] of RENAMED) expect(listed.map((t) => t.name)).not.toContain(old);
  });
});
