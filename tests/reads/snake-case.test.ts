// Issue 23 point 2: one naming convention. Every property the OpenAPI document declares is
// snake_case, and so is every key of an endpoint's configuration as it is read back (config,
// mapping, hmac), in previews and in the store; migration 1001 renames stored camelCase keys
// (both stores).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mcpToolDefinitions } from '../../api/src/mcp/tools.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api, confirm } from '../intents/helpers.ts';

vi.setConfig({ testTimeout: 60_000 });

type Json = Record<string, unknown>;
const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const doc = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../openapi/agent-operations.openapi.json'), 'utf8'),
) as Json;

/** Every property name declared anywhere under `node`, with where. */
function declaredProperties(node: unknown, at: string, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const [i, n] of node.entries()) declaredProperties(n, `${at}[${i}]`, out);
  else if (node && typeof node === 'object') {
    const obj = node as Json;
    if (obj.properties && typeof obj.properties === 'object')
      for (const k of Object.keys(obj.properties)) out.push(`${at}.properties.${k}`);
    for (const [k, v] of Object.entries(obj)) declaredProperties(v, `${at}/${k}`, out);
  }
  return out;
}

/** Every key of a JSON value, at any depth, that is not snake_case. */
function nonSnakeKeys(value: unknown, at = '$', out: string[] = []): string[] {
  if (Array.isArray(value)) for (const [i, v] of value.entries()) nonSnakeKeys(v, `${at}[${i}]`, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (!SNAKE.test(k)) out.push(`${at}.${k}`);
      nonSnakeKeys(v, `${at}.${k}`, out);
    }
  return out;
}

describe('the contract', () => {
  it('declares only snake_case properties (requests and responses, every schema)', () => {
    const props = declaredProperties(doc, '#');
    expect(props.length).toBeGreaterThan(200);
    expect(props.filter((p) => !SNAKE.test(p.slice(p.lastIndexOf('.') + 1)))).toEqual([]);
  });

  it('names every path and query parameter in snake_case, path templates included', () => {
    const paths = doc.paths as Record<string, Record<string, Json>>;
    const names: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const m of path.matchAll(/\{([^}]+)\}/g)) names.push(`${path} {${m[1]}}`);
      for (const [method, op] of Object.entries(item)) {
        for (const p of (op.parameters ?? []) as { name: string; in: string }[])
          if (p.in !== 'header') names.push(`${method.toUpperCase()} ${path} ${p.in} ${p.name}`);
      }
    }
    expect(names.filter((n) => n.includes(' path ')).length).toBeGreaterThanOrEqual(14);
    expect(names.filter((n) => !SNAKE.test(n.slice(n.lastIndexOf(' ') + 1).replace(/^\{|\}$/g, '')))).toEqual([]);
  });

  it('MCP tool arguments (input schema properties) are snake_case, path ids included', () => {
    const tools = mcpToolDefinitions();
    const args = tools.flatMap((t) => declaredProperties(t.inputSchema, t.name));
    expect(args).toEqual(
      expect.arrayContaining(['get_event.properties.event_id', 'get_receipt.properties.receipt_id']),
    );
    expect(args.filter((p) => !SNAKE.test(p.slice(p.lastIndexOf('.') + 1)))).toEqual([]);
  });

  it('MCP tool output schemas declare only snake_case properties', () => {
    const bad = mcpToolDefinitions().flatMap((t) =>
      declaredProperties(t.outputSchema, t.name).filter((p) => !SNAKE.test(p.slice(p.lastIndexOf('.') + 1))),
    );
    expect(bad).toEqual([]);
  });
});

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

describe('endpoint configuration, end to end', () => {
  it('is created, previewed, stored and read back in snake_case', async () => {
    const preview = await api(server, token, 'POST', '/agent/v1/endpoints/intents', {
      name: 'snake',
      trigger_variant: 'external_order_event',
      auth_mode: 'hmac_sha256',
      hmac: { header: 'x-sig', timestamp_header: 'x-ts', tolerance_sec: 120 },
      mapping: {
        resource_id_path: 'order.id',
        required_paths: ['order.id'],
        external_id: { kind: 'json', path: 'id' },
        event_type_path: 'kind',
      },
    });
    expect(preview.status, preview.text).toBe(201);
    expect(nonSnakeKeys(preview.json)).toEqual([]);
    const done = await confirm(server, token, preview.json.id);
    expect(done.status, done.text).toBe(200);
    const id = done.json.result.endpoint_id as string;
    const ep = await api(server, token, 'GET', `/agent/v1/endpoints/${id}`);
    expect(ep.json.config.mapping).toEqual({
      resource_id_path: 'order.id',
      related_resource_id_path: null,
      required_paths: ['order.id'],
      external_id: { kind: 'json', path: 'id' },
      event_type_path: 'kind',
    });
    expect(ep.json.config.hmac).toMatchObject({ header: 'x-sig', timestamp_header: 'x-ts', tolerance_sec: 120 });
    expect(nonSnakeKeys(ep.json)).toEqual([]);
    const row = await server.runtime.services.db.get<{ config_json: string }>(
      'SELECT config_json FROM endpoints WHERE id = ?',
      [id],
    );
    expect(nonSnakeKeys(JSON.parse(row?.config_json ?? '{}'))).toEqual([]);

    // An edit preview diffs in the same names; a field edited keeps the others.
    const edit = await api(server, token, 'POST', `/agent/v1/endpoints/${id}/edit-intents`, {
      mapping: { event_type_path: 'type' },
    });
    expect(edit.status, edit.text).toBe(201);
    expect(nonSnakeKeys(edit.json)).toEqual([]);
    expect(JSON.stringify(edit.json.preview)).toContain('mapping.event_type_path');
  });

  it('migration 1001 renames camelCase keys a store already holds, and they read back the same', async () => {
    const id = server.sandbox?.endpoint_id as string;
    const db = server.runtime.services.db;
    const before = await api(server, token, 'GET', `/agent/v1/endpoints/${id}`);
    // The stored form before this release.
    const camel = JSON.stringify({
      name: before.json.name,
      senderLabel: before.json.sender_label,
      triggerVariant: before.json.trigger_variant,
      authMode: before.json.auth_mode,
      hmac: {
        header: 'x-flowport-signature',
        encoding: 'hex',
        prefix: 'sha256=',
        timestampHeader: null,
        toleranceSec: 300,
      },
      mapping: {
        resourceIdPath: null,
        relatedResourceIdPath: null,
        requiredPaths: [],
        externalId: { kind: 'json', path: 'note "resourceIdPath": stays' },
        eventTypePath: 'type',
      },
    });
    await db.run('UPDATE endpoints SET config_json = ? WHERE id = ?', [camel, id]);
    // The code reads the old spelling too, while the migration has not run.
    const old = await api(server, token, 'GET', `/agent/v1/endpoints/${id}`);
    expect(nonSnakeKeys(old.json)).toEqual([]);
    await db.exec(
      readFileSync(
        join(import.meta.dirname, '../../api/src/store/migrations/1001_endpoint_config_snake_case.sql'),
        'utf8',
      ),
    );
    const row = await db.get<{ config_json: string }>('SELECT config_json FROM endpoints WHERE id = ?', [id]);
    const stored = JSON.parse(row?.config_json ?? '{}');
    expect(nonSnakeKeys(stored)).toEqual([]);
    // A value that happens to contain a key's text is data, and stays as it was.
    expect(stored.mapping.external_id.path).toBe('note "resourceIdPath": stays');
    const after = await api(server, token, 'GET', `/agent/v1/endpoints/${id}`);
    expect(after.json.config).toEqual(old.json.config);
  });
});
