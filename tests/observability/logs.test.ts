// Structured logs through real HTTP: one JSON line per request (intake, Agent API, MCP, the CLI's
// calls) and per handoff attempt, carrying request, shop, endpoint and event ids, outcome and
// duration; and no secret, token, signature or payload body in any line, nor in the CLI's output.
import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_HMAC } from '../../api/src/services/endpoints.ts';
import { MCP_PATH } from '../../api/src/lib/package-info.ts';
import { createLogger } from '../../api/src/observability/log.ts';
import { flowport } from '../cli/helpers.ts';
import { waitFor, workerSettings } from '../handoff/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { connectModern } from '../mcp/helpers.ts';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const l of String(chunk).split('\n')) if (l) lines.push(l);
    done();
  },
});
let server: TestServer;
const BODY_MARKER = 'body-marker-7f3c0d9e-must-not-be-logged';

beforeAll(async () => {
  server = await startTestServer({
    env: { FLOWPORT_LOG_LEVEL: 'info' },
    logDestination: sink,
    configure: workerSettings({ retryBaseMs: 10, retryCapMs: 50 }),
  });
});
afterAll(async () => {
  await server?.close();
});

const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('structured logs', () => {
  it('one JSON line per request and per handoff attempt, and no secret or body in any of them', async () => {
    const sb = server.sandbox;
    if (!sb) throw new Error('sandbox expected');
    // Intake: accepted (its body carries the marker) and refused with a bad signature.
    const body = JSON.stringify({ id: 'log-1', secret_note: BODY_MARKER });
    const signature = createHmac('sha256', sb.signing_secret).update(body).digest('hex');
    const accepted = await fetch(sb.ingest_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [DEFAULT_HMAC.header]: `${DEFAULT_HMAC.prefix}${signature}` },
      body,
    });
    expect(accepted.status).toBe(202);
    const ack = (await accepted.json()) as { event_id: string };
    const forged = await fetch(sb.ingest_url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [DEFAULT_HMAC.header]: `${DEFAULT_HMAC.prefix}${'ab'.repeat(32)}`,
      },
      body,
    });
    expect(forged.status).toBe(401);
    // An endpoint that does not exist: its line names the endpoint and no shop.
    const unknownEndpoint = 'ep_00000000000000000000000000';
    const unknown = await fetch(`${server.url}/in/${unknownEndpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(unknown.status).toBe(404);
    // Agent API with the grant token, and a query string carrying a marker.
    const api = await fetch(`${server.url}/agent/v1/events/${ack.event_id}`, {
      headers: { authorization: `Bearer ${sb.grant_token}` },
    });
    expect(api.status).toBe(200);
    // MCP.
    const mcp = await connectModern(server.url, sb.grant_token);
    const listed = await mcp.callTool('list_events', {});
    expect(listed.isError ?? false).toBe(false);
    await mcp.close();
    // CLI (a client of the API): its calls are logged by the server; its own output is checked too.
    const cli = await flowport(['get-event', ack.event_id], {
      env: { FLOWPORT_BASE_URL: server.url, FLOWPORT_TOKEN: sb.grant_token },
    });
    expect(cli.code).toBe(0);
    // The handoff attempt of the accepted event.
    await waitFor(
      () => parsed().find((l) => l.kind === 'handoff' && l.event_id === ack.event_id) ?? null,
      'a handoff line for the event',
    );

    const all = parsed();
    const intake = all.filter((l) => l.kind === 'request' && l.route === '/in/:endpoint_id');
    const ok = intake.find((l) => l.event_id === ack.event_id);
    expect(ok).toMatchObject({
      status: 202,
      outcome: 'ok',
      shop_id: sb.shop_id,
      endpoint_id: sb.endpoint_id,
    });
    expect(typeof ok?.request_id).toBe('string');
    expect(typeof ok?.duration_ms).toBe('number');
    expect(accepted.headers.get('x-request-id')).toBe(ok?.request_id);
    expect(intake.find((l) => l.status === 401)).toMatchObject({
      outcome: 'refused',
      error_code: 'signature_mismatch',
      shop_id: sb.shop_id,
      endpoint_id: sb.endpoint_id,
    });
    expect(intake.find((l) => l.status === 401)).not.toHaveProperty('event_id');
    const unknownLine = intake.find((l) => l.request_id === unknown.headers.get('x-request-id'));
    expect(unknownLine).toMatchObject({
      kind: 'request',
      method: 'POST',
      status: 404,
      outcome: 'refused',
      endpoint_id: unknownEndpoint,
    });
    expect(unknownLine).not.toHaveProperty('shop_id');
    // No field twice in a line, though a known endpoint's fixed fields come from a child logger's bindings.
    for (const raw of lines.filter((l) => l.includes('"route":"/in/:endpoint_id"')))
      for (const key of ['kind', 'method', 'route', 'shop_id', 'endpoint_id', 'request_id', 'status'])
        expect(raw.split(`"${key}":`).length, `${key} in ${raw}`).toBeLessThanOrEqual(2);
    const apiLine = all.find((l) => l.kind === 'request' && l.request_id === api.headers.get('x-request-id'));
    expect(apiLine).toMatchObject({
      route: '/agent/v1/events/:event_id',
      status: 200,
      shop_id: sb.shop_id,
      event_id: ack.event_id,
    });
    expect(all.some((l) => l.kind === 'request' && l.route === MCP_PATH && l.shop_id === sb.shop_id)).toBe(true);
    expect(
      all.filter((l) => l.kind === 'request' && l.route === '/agent/v1/events/:event_id').length,
    ).toBeGreaterThanOrEqual(2);
    expect(all.find((l) => l.kind === 'handoff' && l.event_id === ack.event_id)).toMatchObject({
      shop_id: sb.shop_id,
      endpoint_id: sb.endpoint_id,
      outcome: 'delivered',
    });

    // Nothing secret, and no body, in any line or in the CLI's output.
    const accessToken = server.runtime.services.secrets.decrypt(
      (
        (await server.runtime.services.db.get<{ access_token_enc: string }>(
          'SELECT access_token_enc FROM shops WHERE id = ?',
          [sb.shop_id],
        )) as { access_token_enc: string }
      ).access_token_enc,
    );
    const forbidden = [sb.signing_secret, sb.grant_token, signature, accessToken, BODY_MARKER, 'secret_note'];
    const text = `${lines.join('\n')}\n${cli.stdout}\n${cli.stderr}`;
    for (const f of forbidden) expect(text.includes(f), f.slice(0, 6)).toBe(false);
  });

  it('is pretty, not JSON, when asked for a terminal', () => {
    const out: string[] = [];
    const w = new Writable({
      write(c, _e, d) {
        out.push(String(c));
        d();
      },
    });
    const log = createLogger({ logLevel: 'info' }, { destination: w, pretty: true });
    log.info({ kind: 'request', request_id: 'req_x', status: 202 }, 'request');
    const text = out.join('');
    expect(text).toContain('request');
    expect(text).toContain('req_x');
    expect(() => JSON.parse(text)).toThrow();
  });

  it("censors secret-named fields at the top level and one level down, leaving the caller's object alone", () => {
    const out: string[] = [];
    const w = new Writable({
      write(c, _e, d) {
        out.push(String(c));
        d();
      },
    });
    const log = createLogger({ logLevel: 'info' }, { destination: w });
    const fields = {
      kind: 'request',
      token: 'token-marker',
      authorization: 'Bearer abc',
      request: { headers: { a: 'b' }, signature: 'sig-marker', route: '/x' },
      list: [{ secret: 'deep-in-array' }],
      status: 202,
    };
    log.info(fields, 'request');
    const line = JSON.parse(out.join('')) as Record<string, unknown>;
    expect(line).toMatchObject({
      kind: 'request',
      token: '[redacted]',
      authorization: '[redacted]',
      request: { headers: '[redacted]', signature: '[redacted]', route: '/x' },
      status: 202,
    });
    expect(out.join('')).not.toContain('sig-marker');
    expect(out.join('')).not.toContain('token-marker');
    // Redaction copies: what the caller passed is unchanged.
    expect(fields.request.signature).toBe('sig-marker');
    expect(fields.authorization).toBe('Bearer abc');
  });
});
