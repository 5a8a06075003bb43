// Flowport as the OAuth authorization server for MCP clients (issue 28, ADR 1400), over real HTTP
// on loopback with the sandbox playing Shopify for the merchant's sign-in. The MCP SDK's own OAuth
// client (both generations) discovers Flowport, registers and gets the authorization URL; the
// merchant approves on the consent page; the client lists tools and calls a read with its token.
// Then every refusal: PKCE, reused code, redirect URI, resource, refresh reuse, consent, CSRF; the
// consent across several stores (ADR 1410); and a Client ID Metadata Document served over https
// on loopback, used as client_id by both SDK generations with no registration.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { auth as authV2 } from '@modelcontextprotocol/client';
import { auth as authV1 } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_PATH } from '../../api/src/lib/package-info.ts';
import { OAuthProtocolError, registerClient, resolveClient } from '../../api/src/oauth/clients.ts';
import { connectLegacy, connectModern, problemOf } from '../mcp/helpers.ts';
import {
  awayFromTheHourEdge,
  memoryProvider,
  REGISTRATION_TEST_TIMEOUT_MS,
  recordingFetch,
  serveMetadataDocuments,
  type MetadataDocumentServer,
} from './helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { absolute, authorize, CookieJar, go, install, uniqueShop } from '../shopify/helpers.ts';

let server: TestServer;
let jar: CookieJar;
let shop: string;
let cimd: Server;
let cimdUrl = '';
let cimdHits = 0;
const REDIRECT = 'http://127.0.0.1:9/callback';
const CONFIRM_TOOL = 'confirm_action_intent';

/** The server's log lines (to check that no token or code is ever logged). */
const logLines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) logLines.push(l);
      done();
    },
  });
  server = await startTestServer({ worker: false, env: { FLOWPORT_LOG_LEVEL: 'info' }, logDestination: sink });
  shop = uniqueShop('oauth');
  jar = await install(server, shop);
  // A Client ID Metadata Document served on loopback (accepted for http loopback in sandbox mode only).
  cimd = createServer((req, res) => {
    cimdHits++;
    res.setHeader('content-type', 'application/json');
    if (req.url === '/huge.json')
      return res.end(JSON.stringify({ client_id: `${cimdUrl}/huge.json`, pad: 'x'.repeat(10_000) }));
    res.end(
      JSON.stringify({
        client_id: `${cimdUrl}/client.json`,
        client_name: 'Loopback CIMD client',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
  await new Promise<void>((r) => cimd.listen(0, '127.0.0.1', r));
  const addr = cimd.address();
  cimdUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(async () => {
  await new Promise((r) => cimd?.close(r));
  await server?.close();
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

async function register(redirectUris = [REDIRECT]): Promise<string> {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test agent', redirect_uris: redirectUris }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

function authorizeUrl(p: Record<string, string>): string {
  const u = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', code_challenge_method: 'S256', ...p }))
    u.searchParams.set(k, v);
  return u.toString();
}

/** Opens the consent page in the merchant's session; returns its form fields. */
async function openConsent(
  url: string,
  j = jar,
): Promise<{ csrf: string; consentId: string; shop: string; html: string }> {
  const res = await go(j, url);
  const html = await res.text();
  expect(res.status, html.slice(0, 400)).toBe(200);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? '';
  // The store selector's first option is the one checked (the store the merchant page shows).
  return { csrf: field('csrf_token'), consentId: field('consent_id'), shop: field('shop'), html };
}

async function decide(
  consent: { csrf: string; consentId: string; shop: string },
  fields: Record<string, string> = {},
  j = jar,
): Promise<Response> {
  return go(j, `${server.url}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: new URLSearchParams({
      csrf_token: consent.csrf,
      consent_id: consent.consentId,
      shop: consent.shop,
      tier: 'observer',
      expires_in_days: '7',
      decision: 'approve',
      ...fields,
    }).toString(),
  });
}

async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** Registers, consents (tier), and returns the code with what the token request needs. */
async function codeFor(tier = 'observer', scope = 'observer', resource = `${server.url}${MCP_PATH}`) {
  const clientId = await register();
  const { verifier, challenge } = pkce();
  const consent = await openConsent(
    authorizeUrl({
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      state: 's1',
      scope,
      resource,
    }),
  );
  const res = await decide(consent, { tier });
  expect(res.status).toBe(303);
  const loc = new URL(res.headers.get('location') ?? '');
  expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
  expect(loc.searchParams.get('state')).toBe('s1');
  expect(loc.searchParams.get('iss')).toBe(server.url);
  return { clientId, verifier, code: loc.searchParams.get('code') ?? '' };
}

const exchange = (c: { clientId: string; verifier: string; code: string }, extra: Record<string, string> = {}) =>
  token({
    grant_type: 'authorization_code',
    code: c.code,
    client_id: c.clientId,
    redirect_uri: REDIRECT,
    code_verifier: c.verifier,
    resource: `${server.url}${MCP_PATH}`,
    ...extra,
  });

describe('discovery', () => {
  it('protected resource metadata lists Flowport as authorization server; RFC 8414 metadata names every endpoint', async () => {
    const prm = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource${MCP_PATH}`)).json()) as Record<
      string,
      unknown
    >;
    expect(prm.authorization_servers).toEqual([server.url]);
    expect(prm.scopes_supported).toContain('observer');
    expect(prm.scopes_supported).toContain('events:read');
    const api = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource/agent/v1`)).json()) as Record<
      string,
      unknown
    >;
    expect(api.resource).toBe(`${server.url}/agent/v1`);
    const as = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      registration_endpoint: `${server.url}/oauth/register`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      client_id_metadata_document_supported: true,
    });
  });
});

describe('registration', () => {
  it('refuses non-https, non-loopback redirect URIs and confidential clients', async () => {
    for (const body of [
      { redirect_uris: ['http://example.com/cb'] },
      { redirect_uris: ['https://example.com/cb#frag'] },
      { redirect_uris: [] },
      { redirect_uris: ['https://example.com/cb'], token_endpoint_auth_method: 'client_secret_basic' },
    ]) {
      const res = await fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: string; docs_url: string };
      expect(['invalid_redirect_uri', 'invalid_client_metadata']).toContain(err.error);
      expect(err.docs_url).toMatch(/\/reference\/errors\/oauth_/);
    }
  });
});

for (const [era, authFn, connect] of [
  ['v2 SDK', authV2, connectModern],
  ['v1 SDK', authV1, connectLegacy],
] as const) {
  describe(`the ${era} OAuth client provider flow`, () => {
    it('discovers, registers, gets the authorization URL; the merchant approves; tools list and a read answers', async () => {
      const { provider, state } = memoryProvider({ redirectUrl: REDIRECT, clientName: `${era} agent` });
      const serverUrl = `${server.url}${MCP_PATH}`;
      expect(await (authFn as any)(provider, { serverUrl, scope: 'observer' })).toBe('REDIRECT');
      expect(state.url?.toString()).toContain(`${server.url}/oauth/authorize?`);
      const consent = await openConsent(state.url?.toString() ?? '');
      expect(consent.html).toContain(`${era} agent`);
      expect(consent.html).toContain('127.0.0.1:9');
      const res = await decide(consent);
      const back = new URL(res.headers.get('location') ?? '').searchParams;
      const code = back.get('code') ?? '';
      const iss = back.get('iss') ?? '';
      expect(await (authFn as any)(provider, { serverUrl, authorizationCode: code, iss })).toBe('AUTHORIZED');
      const accessToken = state.tokens?.access_token ?? '';
      expect(accessToken).toMatch(/^fpa_/);
      const client = await connect(server.url, accessToken);
      try {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name)).toContain('list_events');
        const read = await client.callTool('get_grant', {});
        expect(read.isError ?? false).toBe(false);
        expect(read.structuredContent?.tier).toBe('observer');
        // An observer is refused a confirmation, with the missing scope and its docs link.
        const refused = await client.callTool(CONFIRM_TOOL, {
          intent_id: 'int_00000000000000000000000000',
          idempotency_key: 'k-oauth',
        });
        expect(refused.isError).toBe(true);
        const problem = problemOf(refused);
        expect(problem.code).toBe('missing_scope');
        expect(problem.docs_url).toBe(`${server.url}/reference/errors/missing_scope/`);
      } finally {
        await client.close();
      }
      // The grant is the merchant's: an agent grant named after the client, audited as created via consent.
      const grant = await server.runtime.services.db.get<{ actor_kind: string; actor_name: string; id: string }>(
        'SELECT g.id, g.actor_kind, g.actor_name FROM grants g JOIN shops s ON s.id = g.shop_id WHERE s.domain = ? AND g.actor_name = ?',
        [shop, `${era} agent`],
      );
      expect(grant?.actor_kind).toBe('agent');
      const page = await (await go(jar, `${server.url}/merchant`)).text();
      expect(page).toContain(grant?.id ?? 'missing');
      // Listed as an OAuth client's grant (its grant token was never shown to anyone).
      expect(page).toContain('OAuth client <code>fpc_');
    });
  });
}

describe('tokens', () => {
  it('are bound to their resource, rotate, and refresh reuse revokes the family (audited)', async () => {
    const c = await codeFor();
    const first = await exchange(c);
    expect(first.status).toBe(200);
    const { access_token: access, refresh_token: refresh } = first.body;
    // The MCP token is refused by the HTTP API (another resource).
    const api = await fetch(`${server.url}/agent/v1/grant`, { headers: { authorization: `Bearer ${access}` } });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { code: string }).code).toBe('token_audience_mismatch');
    const mcpOk = await fetch(`${server.url}${MCP_PATH}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${access}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(mcpOk.status).not.toBe(401);
    // Rotation: the refresh token gives a new pair once.
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: refresh ?? '', client_id: c.clientId });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(refresh);
    // Reuse of the rotated one: refused, and the whole family (the new pair too) is revoked.
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: refresh ?? '', client_id: c.clientId });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    const after = await fetch(`${server.url}${MCP_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rotated.body.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(after.status, await after.clone().text()).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(((await after.json()) as { code: string }).code).toBe('access_token_expired');
    const audit = await server.runtime.services.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_log WHERE action = 'oauth.refresh_reuse'",
    );
    expect(Number(audit?.n)).toBeGreaterThan(0);
    const next = await token({
      grant_type: 'refresh_token',
      refresh_token: rotated.body.refresh_token ?? '',
      client_id: c.clientId,
    });
    expect(next.status).toBe(400);
    // No code or token appears in a log line or an audit entry (they keep a short hint at most).
    const auditDump = JSON.stringify(await server.runtime.services.db.all('SELECT * FROM audit_log'));
    expect(logLines.length).toBeGreaterThan(0);
    for (const secret of [c.code, access, refresh, rotated.body.access_token, rotated.body.refresh_token]) {
      expect(secret?.length).toBeGreaterThan(20);
      expect(logLines.filter((l) => l.includes(secret ?? ''))).toEqual([]);
      expect(auditDump).not.toContain(secret);
    }
  });

  it('RFC 7009 revocation and revoking the grant end the tokens; no token is stored in clear', async () => {
    const c = await codeFor();
    const t = (await exchange(c)).body;
    const revoke = await fetch(`${server.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: t.access_token ?? '' }).toString(),
    });
    expect(revoke.status).toBe(200);
    expect(
      (await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token ?? '', client_id: c.clientId }))
        .status,
    ).toBe(400);

    const c2 = await codeFor();
    const t2 = (await exchange(c2)).body;
    const row = await server.runtime.services.db.get<{ grant_id: string }>(
      'SELECT grant_id FROM oauth_tokens WHERE token_hint = ?',
      [`${(t2.access_token ?? '').slice(0, 4)}…${(t2.access_token ?? '').slice(-4)}`],
    );
    await server.runtime.services.db.run('UPDATE grants SET revoked_at = ? WHERE id = ?', [
      Date.now(),
      row?.grant_id ?? '',
    ]);
    const res = await fetch(`${server.url}${MCP_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t2.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('grant_revoked');
    // An access token past its hour: 401 access_token_expired (the client refreshes).
    const c3 = await codeFor();
    const t3 = (await exchange(c3)).body;
    await server.runtime.services.db.run(
      "UPDATE oauth_tokens SET expires_at = ? WHERE client_id = ? AND kind = 'access'",
      [Date.now() - 1, c3.clientId],
    );
    const expired = await fetch(`${server.url}${MCP_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t3.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await expired.json()) as { code: string }).code).toBe('access_token_expired');
    const dump = JSON.stringify(await server.runtime.services.db.all('SELECT * FROM oauth_tokens'));
    expect(dump).not.toContain(t2.access_token);
    expect(dump).not.toContain(t2.refresh_token);
  });
});

describe('errors at the resource', () => {
  it('an API-bound observer token is refused the audit log: 403 insufficient_scope naming the scope, with the docs link', async () => {
    const c = await codeFor('observer', 'observer', `${server.url}/agent/v1`);
    const t = await exchange(c, { resource: `${server.url}/agent/v1` });
    expect(t.status).toBe(200);
    const ok = await fetch(`${server.url}/agent/v1/grant`, {
      headers: { authorization: `Bearer ${t.body.access_token}` },
    });
    expect(ok.status).toBe(200);
    const res = await fetch(`${server.url}/agent/v1/audit`, {
      headers: { authorization: `Bearer ${t.body.access_token}` },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="audit:read", resource_metadata="${server.url}/.well-known/oauth-protected-resource/agent/v1"`,
    );
    const problem = (await res.json()) as { code: string; docs_url: string };
    expect(problem.code).toBe('missing_scope');
    expect(problem.docs_url).toBe(`${server.url}/reference/errors/missing_scope/`);
    // The same token is refused at the MCP endpoint (another resource).
    const mcp = await fetch(`${server.url}${MCP_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.body.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(mcp.status).toBe(401);
    expect(((await mcp.json()) as { code: string }).code).toBe('token_audience_mismatch');
  });

  it(
    'dynamic registration is rate-limited per address',
    async () => {
      await awayFromTheHourEdge();
      let last = 0;
      for (let i = 0; i < 25 && last !== 429; i++) {
        const res = await fetch(`${server.url}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ redirect_uris: [REDIRECT] }),
        });
        last = res.status;
        if (last === 429)
          expect(((await res.json()) as { flowport_code: string }).flowport_code).toBe(
            'oauth_registration_rate_limited',
          );
      }
      expect(last).toBe(429);
      // Let the other tests register again.
      await server.runtime.services.db.run('DELETE FROM oauth_registration_counts');
    },
    REGISTRATION_TEST_TIMEOUT_MS,
  );
});

describe('loopback redirect URIs (RFC 8252 §7.3): any port on 127.0.0.1 and [::1], nothing else loosened', () => {
  /** Consent with `used` as the redirect URI of a client that registered `registered`; the code and its redirect. */
  async function consentWith(registered: string, used: string) {
    const clientId = await register([registered]);
    const { verifier, challenge } = pkce();
    const url = authorizeUrl({ client_id: clientId, redirect_uri: used, code_challenge: challenge, state: 'lb' });
    return { clientId, verifier, url };
  }

  it('a port other than the registered one: the consent and the redirect to that port; the token request names that port', async () => {
    for (const [registered, used] of [
      ['http://127.0.0.1/callback', 'http://127.0.0.1:53121/callback'],
      ['http://127.0.0.1:9/callback', 'http://127.0.0.1:60000/callback'],
      ['http://[::1]:9/cb?x=1', 'http://[::1]:41234/cb?x=1'],
    ] as const) {
      const c = await consentWith(registered, used);
      const res = await decide(await openConsent(c.url));
      expect(res.status, used).toBe(303);
      const loc = new URL(res.headers.get('location') ?? '');
      expect(`${loc.origin}${loc.pathname}`, used).toBe(new URL(used).origin + new URL(used).pathname);
      const code = loc.searchParams.get('code') ?? '';
      const base = { clientId: c.clientId, verifier: c.verifier, code };
      // At token time the redirect URI is the one of the authorization request (RFC 6749 §4.1.3).
      expect((await exchange(base, { redirect_uri: registered })).body.error, used).toBe('invalid_grant');
    }
  });

  it('the exchange with the port used at authorization succeeds', async () => {
    const c = await consentWith('http://127.0.0.1:9/callback', 'http://127.0.0.1:50505/callback');
    const res = await decide(await openConsent(c.url));
    const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const ok = await exchange(
      { clientId: c.clientId, verifier: c.verifier, code },
      { redirect_uri: 'http://127.0.0.1:50505/callback' },
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('another path, query, host, scheme, or `localhost` with another port: refused, never redirected', async () => {
    for (const [registered, used] of [
      ['http://127.0.0.1:9/callback', 'http://127.0.0.1:9/other'],
      ['http://127.0.0.1:9/callback', 'http://127.0.0.1:10/callback?x=1'],
      ['http://127.0.0.1:9/callback', 'http://127.0.0.2:9/callback'],
      ['http://127.0.0.1:9/callback', 'http://[::1]:9/callback'],
      ['http://localhost:9/callback', 'http://localhost:10/callback'],
      ['https://app.example/cb', 'https://app.example:8443/cb'],
    ] as const) {
      const c = await consentWith(registered, used);
      const res = await go(jar, c.url);
      expect(res.status, used).toBe(400);
      expect(res.headers.get('location'), used).toBeNull();
      expect(await res.text(), used).toContain('/reference/errors/oauth_invalid_redirect_uri/');
    }
  });
});

describe('a malformed form body at the OAuth endpoints', () => {
  it('multipart with a broken part or no boundary: 400 invalid_request, without signing in, nothing logged as an error', async () => {
    const from = logLines.length;
    for (const path of ['/oauth/token', '/oauth/revoke']) {
      for (const [type, body] of [
        ['multipart/form-data; boundary=XX', '--XX\r\nbroken\r\n--XX--\r\n'],
        ['multipart/form-data', 'token=abc'],
      ] as const) {
        const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
        const problem = (await res.json()) as { code: string; detail: string };
        expect([res.status, problem.code], `${path} ${type}`).toEqual([400, 'invalid_request']);
        expect(problem.detail).toMatch(/multipart\/form-data body could not be read/);
      }
    }
    const after = logLines.slice(from);
    expect(after.filter((l) => /"level":(50|60)|Failed to parse body/.test(l))).toEqual([]);
  });
});

describe('the per-address registration limit', () => {
  it(
    'keys an IPv6 client on its /64 (one network cannot use up the global cap); IPv4 on the address',
    async () => {
      await awayFromTheHourEdge();
      const services = server.runtime.services;
      const attempt = async (from: string) => {
        try {
          await registerClient(services, { redirect_uris: [REDIRECT] }, from);
          return 201;
        } catch (err) {
          if (err instanceof OAuthProtocolError) return err.error;
          throw err;
        }
      };
      try {
        const answers: (number | string)[] = [];
        // 25 addresses of one /64 (the interface ids differ, written in several forms).
        for (let i = 1; i <= 25; i++)
          answers.push(await attempt(i % 2 ? `2001:db8:1:2::${i.toString(16)}` : `2001:0db8:0001:0002:${i}:0:0:1`));
        expect(answers.filter((a) => a === 201)).toHaveLength(20);
        expect(answers.slice(20)).toEqual(Array(5).fill('oauth_registration_rate_limited'));
        // Another /64 (the next network) and IPv4 addresses are counted on their own.
        expect(await attempt('2001:db8:1:3::1')).toBe(201);
        expect(await attempt('192.0.2.1')).toBe(201);
        expect(await attempt('192.0.2.2')).toBe(201);
      } finally {
        await services.db.run('DELETE FROM oauth_registration_counts');
      }
    },
    REGISTRATION_TEST_TIMEOUT_MS,
  );
});

describe('refusals', () => {
  it('wrong PKCE verifier, reused code, mismatched redirect URI, mismatched resource', async () => {
    const c = await codeFor();
    expect((await exchange(c, { code_verifier: pkce().verifier })).body.error).toBe('invalid_grant');
    expect((await exchange(c, { redirect_uri: 'http://127.0.0.1:9/other' })).body.error).toBe('invalid_grant');
    expect((await exchange(c, { resource: `${server.url}/agent/v1` })).body.error).toBe('invalid_target');
    const ok = await exchange(c);
    expect(ok.status).toBe(200);
    const again = await exchange(c);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    // The reuse ended what the first exchange issued.
    const res = await fetch(`${server.url}${MCP_PATH}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ok.body.access_token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });

  it('unknown client or unregistered redirect URI: a page with the code, never a redirect', async () => {
    const { challenge } = pkce();
    const unknown = await go(
      jar,
      authorizeUrl({ client_id: 'fpc_nope', redirect_uri: 'https://evil.example/cb', code_challenge: challenge }),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get('location')).toBeNull();
    expect(await unknown.text()).toContain('/reference/errors/oauth_invalid_client/');
    const clientId = await register();
    const wrong = await go(
      jar,
      authorizeUrl({ client_id: clientId, redirect_uri: 'https://evil.example/cb', code_challenge: challenge }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.headers.get('location')).toBeNull();
    expect(await wrong.text()).toContain('<code>oauth_invalid_redirect_uri</code>');
    // Known client and redirect: other errors go back to the client.
    const noPkce = await go(
      jar,
      authorizeUrl({ client_id: clientId, redirect_uri: REDIRECT, code_challenge: 'short', state: 'x' }),
    );
    expect(noPkce.status).toBe(303);
    const loc = new URL(noPkce.headers.get('location') ?? '');
    expect(loc.searchParams.get('error')).toBe('invalid_request');
    expect(loc.searchParams.get('state')).toBe('x');
  });

  it('decline sends access_denied; CSRF and an expired consent are refused and create no grant', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const url = authorizeUrl({ client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, state: 'd' });
    const declined = await decide(await openConsent(url), { decision: 'deny' });
    expect(new URL(declined.headers.get('location') ?? '').searchParams.get('error')).toBe('access_denied');

    const consent = await openConsent(url);
    const forged = await decide({ ...consent, csrf: 'forged' });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('merchant_form_expired');
    const otherOrigin = await go(jar, `${server.url}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({
        csrf_token: consent.csrf,
        consent_id: consent.consentId,
        decision: 'approve',
      }).toString(),
    });
    expect(otherOrigin.status).toBe(403);
    await server.runtime.services.db.run('UPDATE oauth_consents SET expires_at = ? WHERE id = ?', [
      Date.now() - 1,
      consent.consentId,
    ]);
    const expired = await decide(consent);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain('<code>oauth_consent_expired</code>');
    const grants = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM oauth_codes WHERE client_id = ?',
      [clientId],
    );
    expect(Number(grants?.n)).toBe(0);
    // A tier above the one requested is refused; the same consent, corrected, is then answered once.
    const fresh = await openConsent(url);
    const higher = await decide(fresh, { tier: 'admin_assistant' });
    expect(higher.status).toBe(400);
    expect(await higher.text()).toContain('<code>oauth_invalid_request</code>');
    expect((await decide(fresh)).status).toBe(303);
    const twice = await decide(fresh);
    expect(twice.status).toBe(403);
    expect(await twice.text()).toContain('<code>oauth_consent_expired</code>');
  });

  it('without a session the authorize URL goes to sign-in and comes back', async () => {
    const clientId = await register();
    const { challenge } = pkce();
    const fresh = new CookieJar();
    const url = authorizeUrl({ client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge });
    const res = await go(fresh, url);
    expect(res.status).toBe(303);
    expect(absolute(server, res.headers.get('location'))).toBe(`${server.url}/merchant`);
    expect(decodeURIComponent(fresh.cookies.get('flowport_oauth_return') ?? '')).toContain('/oauth/authorize?');
    // Anonymous requests never make Flowport fetch a metadata document.
    const before = cimdHits;
    const anon = await go(
      new CookieJar(),
      authorizeUrl({ client_id: `${cimdUrl}/client.json`, redirect_uri: REDIRECT, code_challenge: challenge }),
    );
    expect(anon.status).toBe(303);
    expect(cimdHits).toBe(before);
  });
});

describe('the consent across several stores (ADR 1410)', () => {
  it('lists the stores this browser signed in to, signs in to another and comes back, and grants only a chosen, signed-in store', async () => {
    const first = uniqueShop('first');
    const second = uniqueShop('second');
    const elsewhere = uniqueShop('elsewhere');
    // Flowport is installed on all three; this browser signs in to the first only, for now.
    await install(server, second);
    await install(server, elsewhere);
    const browser = await install(server, first);
    const clientId = await register();
    const { challenge } = pkce();
    const url = authorizeUrl({ client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, state: 'm' });
    const one = await openConsent(url, browser);
    expect(one.shop).toBe(first);
    expect(one.html).not.toContain(second);
    // "Sign in to another store" returns to this consent (the authorize URL, and nothing else).
    const link =
      /href="([^"]*\/merchant\/sign-in\?return_to=[^"]+)"/.exec(one.html)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(decodeURIComponent(link)).toContain('/oauth/authorize?');
    const signInPage = await go(browser, absolute(server, link));
    expect(signInPage.status).toBe(200);
    expect(await signInPage.text()).toContain('name="return_to"');
    const returnTo = new URL(absolute(server, link)).searchParams.get('return_to') ?? '';
    const start = `/merchant/sign-in?${new URLSearchParams({ shop: second, return_to: returnTo })}`;
    const back = await go(browser, await authorize(server, browser, second, 'install', start));
    expect(back.status).toBe(303);
    expect(absolute(server, back.headers.get('location'))).toBe(url);

    // Back on the consent page: both stores, the newest sign-in checked.
    const two = await openConsent(url, browser);
    expect(two.html).toContain(`name="shop" value="${first}"`);
    expect(two.html).toContain(`name="shop" value="${second}"`);
    expect(two.html).not.toContain(elsewhere);
    expect(two.shop).toBe(second);

    const db = server.runtime.services.db;
    const grantsOf = async (domain: string) =>
      (
        await db.all<{ id: string; actor_client: string | null }>(
          'SELECT g.id, g.actor_client FROM grants g JOIN shops s ON s.id = g.shop_id WHERE s.domain = ?',
          [domain],
        )
      ).filter((g) => g.actor_client === clientId);
    // A store Flowport knows but this browser is not signed in to: refused with its code, nothing made.
    const forged = await decide(two, { shop: elsewhere }, browser);
    expect(forged.status).toBe(403);
    expect(forged.headers.get('location')).toBeNull();
    const page = await forged.text();
    expect(page).toContain('<code>oauth_shop_not_signed_in</code>');
    expect(page).toContain('/reference/errors/oauth_shop_not_signed_in/');
    for (const shop of [first, second, elsewhere]) expect(await grantsOf(shop)).toEqual([]);
    expect(
      Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_codes WHERE client_id = ?', [clientId]))?.n),
    ).toBe(0);

    // The merchant chooses the first store (not the one checked): the grant is made there only.
    const approved = await decide(two, { shop: first }, browser);
    expect(approved.status).toBe(303);
    expect(new URL(approved.headers.get('location') ?? '').searchParams.get('code')).toBeTruthy();
    expect(await grantsOf(first)).toHaveLength(1);
    expect(await grantsOf(second)).toEqual([]);
    // Audited in the first store's chain, by who signed in to it.
    const audit = await db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM audit_log a JOIN shops s ON s.id = a.shop_id WHERE s.domain = ? AND a.action = 'grant.create' AND a.target_id = ?",
      [first, (await grantsOf(first))[0]?.id ?? ''],
    );
    expect(Number(audit?.n)).toBe(1);

    // A second consent, for the second store, lands there.
    const again = await openConsent(url, browser);
    expect((await decide(again, { shop: second }, browser)).status).toBe(303);
    expect(await grantsOf(second)).toHaveLength(1);
    expect(await grantsOf(first)).toHaveLength(1);

    // The merchant page shows the newest store and switches to the other without signing in again.
    const merchant = await (await go(browser, `${server.url}/merchant`)).text();
    expect(merchant).toContain(`<h1>${second}</h1>`);
    expect(merchant).toContain(`Switch to ${first}`);
    const switched = await go(browser, `${server.url}/merchant?shop=${first}`);
    expect(switched.status).toBe(303);
    expect(await (await go(browser, `${server.url}/merchant`)).text()).toContain(`<h1>${first}</h1>`);
  });
});

describe('Client ID Metadata Documents outside sandbox mode', () => {
  it('refuse http and non-public addresses (SSRF guard) before fetching anything', async () => {
    const services = server.runtime.services;
    const production = {
      db: services.db,
      now: services.now,
      config: { ...services.config, shopify: { ...services.config.shopify, adminBaseUrl: 'https://example.test' } },
    };
    let hits = 0;
    const spy = createServer((_req, res) => {
      hits++;
      res.end('{}');
    });
    await new Promise<void>((r) => spy.listen(0, '127.0.0.1', r));
    const addr = spy.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    try {
      // http loopback is not a metadata document outside sandbox mode: an unknown client.
      await expect(resolveClient(production, `http://127.0.0.1:${port}/client.json`)).rejects.toThrow(
        /No client is registered/,
      );
      await expect(resolveClient(production, `https://127.0.0.1:${port}/client.json`)).rejects.toThrow(
        /non-public address/,
      );
      await expect(resolveClient(production, `https://localhost:${port}/client.json`)).rejects.toThrow(
        /non-public address/,
      );
      expect(hits).toBe(0);
    } finally {
      await new Promise((r) => spy.close(r));
    }
  });
});

describe('Client ID Metadata Documents', () => {
  it('a loopback document (sandbox mode) is fetched, its redirect URIs enforced, and too-large documents refused', async () => {
    const { challenge, verifier } = pkce();
    const clientId = `${cimdUrl}/client.json`;
    const consent = await openConsent(
      authorizeUrl({ client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge }),
    );
    expect(consent.html).toContain('Loopback CIMD client');
    const res = await decide(consent);
    const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
    expect((await exchange({ clientId, verifier, code })).status).toBe(200);
    const bad = await go(
      jar,
      authorizeUrl({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/other', code_challenge: challenge }),
    );
    expect(bad.status).toBe(400);
    const huge = await go(
      jar,
      authorizeUrl({ client_id: `${cimdUrl}/huge.json`, redirect_uri: REDIRECT, code_challenge: challenge }),
    );
    expect(huge.status).toBe(400);
    expect(await huge.text()).toContain('oauth_invalid_client');
  });
});

describe('a Client ID Metadata Document over https, through the MCP SDK (both generations)', () => {
  // The document is served over https on loopback (see serveMetadataDocuments for the certificate
  // and why Flowport, in sandbox mode, fetches it from 127.0.0.1).
  let docs: MetadataDocumentServer;
  beforeAll(async () => {
    docs = await serveMetadataDocuments([REDIRECT]);
  });
  afterAll(async () => {
    await docs?.close();
  });

  for (const [era, slug, authFn, connect] of [
    ['v2 SDK', 'v2', authV2, connectModern],
    ['v1 SDK', 'v1', authV1, connectLegacy],
  ] as const) {
    it(`the ${era} uses the document URL as client_id (no registration); the merchant approves; tools list, a read answers, an observer may not confirm`, async () => {
      const clientMetadataUrl = docs.urlOf(slug);
      const calls: string[] = [];
      const fetchFn = recordingFetch(calls);
      const { provider, state, accessToken } = memoryProvider({
        redirectUrl: REDIRECT,
        clientName: `${era} agent`,
        clientMetadataUrl,
      });
      const db = server.runtime.services.db;
      const dynamicClients = async () =>
        Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM oauth_clients WHERE kind = 'dynamic'"))?.n);
      const dynamicBefore = await dynamicClients();

      /** One authorization for `serverUrl` (the MCP endpoint or the HTTP API): its access token. */
      const connectTo = async (serverUrl: string): Promise<string> => {
        delete state.tokens;
        expect(await (authFn as any)(provider, { serverUrl, scope: 'observer', fetchFn })).toBe('REDIRECT');
        expect(state.url?.searchParams.get('client_id')).toBe(clientMetadataUrl);
        const consent = await openConsent(state.url?.toString() ?? '');
        // The name comes from the document Flowport fetched, not from the SDK's clientMetadata.
        expect(consent.html).toContain(docs.nameOf(slug));
        expect(consent.html).toContain(`<code>${clientMetadataUrl}</code>`);
        const res = await decide(consent);
        const back = new URL(res.headers.get('location') ?? '').searchParams;
        expect(
          await (authFn as any)(provider, {
            serverUrl,
            authorizationCode: back.get('code') ?? '',
            iss: back.get('iss') ?? '',
            fetchFn,
          }),
        ).toBe('AUTHORIZED');
        return accessToken();
      };

      const mcpToken = await connectTo(`${server.url}${MCP_PATH}`);
      expect(state.client?.client_id).toBe(clientMetadataUrl);
      // Discovery and the token request went to Flowport; registration never did.
      expect(calls).toContain('POST /oauth/token');
      expect(calls.filter((c) => c.includes('/oauth/register'))).toEqual([]);
      expect(await dynamicClients()).toBe(dynamicBefore);
      // Flowport fetched the document once, and keeps it as a metadata-document client.
      expect(docs.hits.get(slug)).toBe(1);
      const row = await db.get<{ kind: string }>('SELECT kind FROM oauth_clients WHERE client_id = ?', [
        clientMetadataUrl,
      ]);
      expect(row?.kind).toBe('metadata_document');

      const client = await connect(server.url, mcpToken);
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('list_events');
        const read = await client.callTool('get_grant', {});
        expect(read.isError ?? false).toBe(false);
        expect(read.structuredContent?.tier).toBe('observer');
        // Over MCP a refusal is a tool result (ADR 0500): the problem names the scope it lacks.
        const refused = await client.callTool(CONFIRM_TOOL, {
          intent_id: 'int_00000000000000000000000000',
          idempotency_key: `k-cimd-${slug}`,
        });
        expect(refused.isError).toBe(true);
        const problem = problemOf(refused);
        expect(problem.code).toBe('missing_scope');
        expect(problem.docs_url).toBe(`${server.url}/reference/errors/missing_scope/`);
      } finally {
        await client.close();
      }

      // Over HTTP (a token for the API, from the same client and document): 403 insufficient_scope.
      const apiToken = await connectTo(`${server.url}/agent/v1`);
      expect(docs.hits.get(slug)).toBe(1);
      const confirm = await fetch(`${server.url}/agent/v1/action-intents/int_00000000000000000000000000/confirm`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiToken}`, 'idempotency-key': `k-cimd-http-${slug}` },
      });
      expect(confirm.status).toBe(403);
      const challenge = confirm.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer error="insufficient_scope", scope="[^"]+"/);
      expect(challenge).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/agent/v1"`);
      const body = (await confirm.json()) as { code: string; docs_url: string };
      expect(body.code).toBe('missing_scope');
      expect(body.docs_url).toBe(`${server.url}/reference/errors/missing_scope/`);
      expect(calls.filter((c) => c.includes('/oauth/register'))).toEqual([]);
    });
  }
});
