// Issue 43 item 9: the contract declares what it returns.
// - A request body the contract marks required is required: a POST without one is refused with
//   400 `invalid_request` naming the body, never run with defaults (5 previews answered 201).
// - An operation that answers a code its contract does not declare is caught where it happens,
//   on HTTP and MCP: the runtime reports it (ServiceHooks.undeclaredError, and an error log line),
//   and every test server fails its close() on a report, so the whole suite checks that every
//   code a route returns is declared.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineOperation } from '../../api/src/core/types.ts';
import { AppError } from '../../api/src/errors/problem.ts';
import { operationErrorCodes } from '../../api/src/http/agent-router.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { connectModern, problemOf } from '../mcp/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

type Json = Record<string, any>;
const committed = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../openapi/agent-operations.openapi.json'), 'utf8'),
) as Json;

/** Answers a code it does not declare (`event_in_flight`), and one it does (`not_found`). */
const undeclaredFixture = defineOperation({
  operationId: 'getUndeclaredFixture',
  method: 'get',
  path: '/agent/v1/test-fixtures/undeclared',
  summary: 'Answer an undeclared code',
  description: 'Test-only operation.',
  family: 'events',
  kind: 'read',
  scope: 'events:read',
  meter: null,
  request: { query: z.object({ declared: z.enum(['yes', 'no']).optional() }) },
  response: z.object({ ok: z.boolean() }),
  errors: ['not_found'],
  mcp: { name: 'get_undeclared_fixture', title: 'Undeclared fixture', description: 'Test-only.' },
  cli: null,
  async run({ input }) {
    throw new AppError(input.declared === 'yes' ? 'not_found' : 'event_in_flight');
  },
});

let server: TestServer;
let token: string;
const reports: { operation_id: string; code: string; transport: string }[] = [];

beforeAll(async () => {
  server = await startTestServer({ worker: false, operations: [...OPERATIONS, undeclaredFixture] });
  token = server.sandbox?.grant_token as string;
});
afterAll(async () => {
  await server?.close();
});

describe('a required request body is required', () => {
  const withBody = OPERATIONS.filter((op) => op.request.body);

  it('the contract marks every request body required', () => {
    expect(withBody.length).toBeGreaterThanOrEqual(9);
    for (const op of withBody)
      expect(committed.paths[op.path][op.method].requestBody?.required, op.operationId).toBe(true);
  });

  it.each(withBody.map((op) => [op.operationId, op] as const))(
    '%s without a body: 400 invalid_request naming the body',
    async (_id, op) => {
      const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => `${name.split('_')[0]}_0000000000000000000000`);
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status, op.operationId).toBe(400);
      const problem = (await res.json()) as { code: string; errors?: { path: string; message: string }[] };
      expect(problem.code).toBe('invalid_request');
      expect(problem.errors?.[0]?.path).toBe('(body)');
      expect(problem.errors?.[0]?.message).toContain('{}');
    },
  );
});

describe('every code an operation answers is declared', () => {
  it('an undeclared code is reported on HTTP and over MCP; a declared one is not', async () => {
    const hooks = server.runtime.services.hooks;
    const previous = hooks.undeclaredError;
    hooks.undeclaredError = (r) => reports.push(r);
    try {
      const call = (q: string) =>
        fetch(`${server.url}/agent/v1/test-fixtures/undeclared${q}`, { headers: { authorization: `Bearer ${token}` } });
      expect((await call('?declared=yes')).status).toBe(404);
      expect(reports).toEqual([]);
      const res = await call('');
      // The answer itself is unchanged: the report is for whoever keeps the contract.
      expect(res.status).toBe(409);
      expect(reports).toEqual([{ operation_id: 'getUndeclaredFixture', code: 'event_in_flight', transport: 'http' }]);

      const client = await connectModern(server.url, token);
      const result = await client.callTool('get_undeclared_fixture', {});
      await client.close();
      expect(problemOf(result).code).toBe('event_in_flight');
      expect(reports[1]).toEqual({ operation_id: 'getUndeclaredFixture', code: 'event_in_flight', transport: 'mcp' });
    } finally {
      hooks.undeclaredError = previous;
    }
  });

  it('the declared codes are the middleware’s and the operation’s, derived: the contract lists exactly them', () => {
    for (const op of OPERATIONS) {
      const listed = committed.paths[op.path][op.method]['x-flowport-error-codes'] as string[];
      expect(listed.sort(), op.operationId).toEqual([...operationErrorCodes(op)].sort());
      // Every route is behind the input guard (invalid_characters) and refuses unknown input.
      expect(listed).toContain('invalid_characters');
      expect(listed).toContain('unknown_field');
      if (op.request.body) expect(listed).toContain('invalid_request');
    }
  });

  it('a test server whose operations answered an undeclared code fails its close', async () => {
    const other = await startTestServer({ worker: false, operations: [...OPERATIONS, undeclaredFixture] });
    const res = await fetch(`${other.url}/agent/v1/test-fixtures/undeclared`, {
      headers: { authorization: `Bearer ${other.sandbox?.grant_token}` },
    });
    expect(res.status).toBe(409);
    await expect(other.close()).rejects.toThrow(/getUndeclaredFixture answered event_in_flight/);
  });
});
