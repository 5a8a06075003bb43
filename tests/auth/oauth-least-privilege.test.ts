// Least privilege by default for agents and registration abuse (issue 40, ADR 1430), over real
// HTTP on loopback with the sandbox playing Shopify. The 401 challenge names the read-only tier;
// the consent page pre-selects the lowest tier covering what was asked (observer when the client
// asked for everything it was offered) and says what each higher tier adds; a call that needs more
// answers 403 insufficient_scope naming the scope (MCP step-up); a store signed in to during the
// authorization flow is never pre-selected. Dynamic registration has a global cap per hour, keys
// its per-address limit on the address FLOWPORT_TRUSTED_PROXIES says is the client's, and clients
// never used expire.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUESTABLE_SCOPES } from '../../api/src/oauth/metadata.ts';
import { parseTrustedProxies, resolveClientAddress } from '../../api/src/http/client-address.ts';
import { MCP_PATH } from '../../api/src/lib/package-info.ts';
import { rawMcpPost } from '../mcp/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { CookieJar, go, install, uniqueShop } from '../shopify/helpers.ts';
import { awayFromTheHourEdge, REGISTRATION_TEST_TIMEOUT_MS } from './helpers.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

async function register(
  server: TestServer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, string>; retryAfter: string | null }> {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ client_name: 'Least privilege agent', redirect_uris: [REDIRECT] }),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, string>,
    retryAfter: res.headers.get('retry-after'),
  };
}

function authorizeUrl(server: TestServer, p: Record<string, string>): string {
  const u = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: 'code', code_challenge_method: 'S256', ...p }))
    u.searchParams.set(k, v);
  return u.toString();
}

interface Consent {
  html: string;
  csrf: string;
  consentId: string;
  checkedTier: string | null;
  checkedShop: string | null;
  tiers: string[];
}

async function openConsent(jar: CookieJar, url: string): Promise<Consent> {
  const res = await go(jar, url);
  const html = await res.text();
  expect(res.status, html.slice(0, 400)).toBe(200);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? '';
  const checked = (name: string) => new RegExp(`name="${name}" value="([^"]+)"[^>]* checked`).exec(html)?.[1] ?? null;
  return {
    html,
    csrf: field('csrf_token'),
    consentId: field('consent_id'),
    checkedTier: checked('tier'),
    checkedShop: checked('shop'),
    tiers: [...html.matchAll(/name="tier" value="([^"]+)"/g)].map((m) => m[1] ?? ''),
  };
}

async function approve(
  server: TestServer,
  jar: CookieJar,
  consent: Consent,
  fields: Record<string, string>,
): Promise<URL> {
  const res = await go(jar, `${server.url}/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: new URLSearchParams({
      csrf_token: consent.csrf,
      consent_id: consent.consentId,
      expires_in_days: '7',
      decision: 'approve',
      ...fields,
    }).toString(),
  });
  expect(res.status, await res.clone().text()).toBe(303);
  return new URL(res.headers.get('location') ?? '');
}

describe('least privilege by default', () => {
  let server: TestServer;
  let shop: string;
  let jar: CookieJar;
  beforeAll(async () => {
    server = await startTestServer({ worker: false });
    shop = uniqueShop('leastpriv');
    jar = await install(server, shop);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the 401 challenge at the MCP endpoint and at the HTTP API names the read-only tier and the metadata', async () => {
    const mcp = await rawMcpPost(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource${MCP_PATH}", scope="observer"`,
    );
    const api = await fetch(`${server.url}/agent/v1/events`);
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/agent/v1", scope="observer"`,
    );
  });

  it('the consent pre-selects observer when the client asked for everything it was offered, and shows what each higher tier adds', async () => {
    const client = (await register(server)).body.client_id ?? '';
    const url = (scope?: string) =>
      authorizeUrl(server, {
        client_id: client,
        redirect_uri: REDIRECT,
        code_challenge: pkce().challenge,
        state: 's',
        ...(scope === undefined ? {} : { scope }),
      });
    // What an SDK asks for with no challenge scope: every scope the metadata lists (SEP-835 step 2).
    const everything = await openConsent(jar, url(REQUESTABLE_SCOPES.join(' ')));
    expect(everything.checkedTier).toBe('observer');
    expect(everything.tiers).toEqual(['observer', 'operator', 'recovery_operator', 'admin_assistant']);
    // Each higher tier says what it adds to the pre-selected one.
    expect(everything.html).toMatch(/admin_assistant[\s\S]*Adds[\s\S]*endpoint_delete:execute/);
    expect(everything.html).toMatch(/recovery_operator[\s\S]*Adds[\s\S]*replay:execute/);
    // Nothing asked: observer, alone.
    const nothing = await openConsent(jar, url());
    expect(nothing.checkedTier).toBe('observer');
    expect(nothing.tiers).toEqual(['observer']);
    // One scope: the lowest tier covering it.
    const replay = await openConsent(jar, url('observer replay:execute'));
    expect(replay.checkedTier).toBe('recovery_operator');
  });

  it('over MCP an OAuth token without the scope a tool needs gets 403 insufficient_scope naming it (step-up), and a new consent raises the tier', async () => {
    const client = (await register(server)).body.client_id ?? '';
    const mcpResource = `${server.url}${MCP_PATH}`;
    const tokenFor = async (scope: string) => {
      const { verifier, challenge } = pkce();
      const consent = await openConsent(
        jar,
        authorizeUrl(server, {
          client_id: client,
          redirect_uri: REDIRECT,
          code_challenge: challenge,
          state: 'up',
          scope,
          resource: mcpResource,
        }),
      );
      const back = await approve(server, jar, consent, { shop, tier: consent.checkedTier ?? '' });
      const res = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: back.searchParams.get('code') ?? '',
          client_id: client,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
          resource: mcpResource,
        }).toString(),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const tool = (token: string, name: string, args: Record<string, unknown>) =>
      rawMcpPost(
        server.url,
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } },
        { authorization: `Bearer ${token}` },
      );
    const call = (token: string) =>
      tool(token, 'preview_endpoint_create', {
        name: 'Step up',
        trigger_variant: 'external_event',
        auth_mode: 'github',
      });
    const observer = await tokenFor('observer');
    const refused = await call(observer);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="endpoint_create:preview", resource_metadata="${server.url}/.well-known/oauth-protected-resource${MCP_PATH}"`,
    );
    expect(((await refused.json()) as { code: string }).code).toBe('missing_scope');
    // Nothing was created by the refused call.
    const intents = await server.runtime.services.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM action_intents WHERE kind = 'endpoint_create'",
    );
    expect(Number(intents?.n)).toBe(0);
    // The client asks again with the challenge's scope (the v2 SDK sends the union with what it held).
    const raised = await tokenFor('observer endpoint_create:preview');
    const ok = await call(raised);
    expect(ok.status).toBe(200);
    const text = await ok.text();
    expect(text).toContain('endpoint_create');
    expect(text).not.toContain('"isError":true');
    // Confirming names the intent kind's execute scope (operator previews; it does not execute).
    const intentId = /"(int_[0-9a-z]{26})"/.exec(text)?.[1] ?? '';
    expect(intentId).not.toBe('');
    const confirm = await tool(raised, 'confirm_action_intent', { intent_id: intentId, idempotency_key: 'k-step-up' });
    expect(confirm.status).toBe(403);
    expect(confirm.headers.get('www-authenticate')).toContain('scope="endpoint_create:execute"');
    // An intent of no kind it can see (unknown id): the tool answers as before, in a tool result.
    const unknown = await tool(raised, 'confirm_action_intent', {
      intent_id: 'int_00000000000000000000000000',
      idempotency_key: 'k-step-up-2',
    });
    expect(unknown.status).toBe(200);
    expect(await unknown.text()).toContain('"isError":true');
  });

  it('never pre-selects a store this browser signed in to during the authorization flow', async () => {
    const first = uniqueShop('before');
    const planted = uniqueShop('planted');
    await install(server, planted);
    const browser = await install(server, first);
    const client = (await register(server)).body.client_id ?? '';
    const url = authorizeUrl(server, {
      client_id: client,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      state: 'csrf',
    });
    const before = await openConsent(browser, url);
    expect(before.checkedShop).toBe(first);
    // During the flow, the browser is signed in to another store (as a login CSRF would): it is
    // listed first, but the store signed in to before the flow stays the one checked.
    await install(server, planted, browser);
    const after = await openConsent(browser, url);
    expect(after.html).toContain(`name="shop" value="${planted}"`);
    expect(after.checkedShop).toBe(first);

    // Signed out when the flow starts: the store signed in to during it is listed, not checked.
    const fresh = new CookieJar();
    const url2 = authorizeUrl(server, {
      client_id: client,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      state: 'out',
    });
    expect((await go(fresh, url2)).status).toBe(303);
    await install(server, planted, fresh);
    const only = await openConsent(fresh, url2);
    expect(only.html).toContain(`name="shop" value="${planted}"`);
    expect(only.checkedShop).toBeNull();
    // The merchant chooses it: approved.
    expect(
      (await approve(server, fresh, only, { shop: planted, tier: 'observer' })).searchParams.get('code'),
    ).toBeTruthy();
  });

  it('a dynamically registered client never used expires (refused at use, then purged); a used one stays', async () => {
    const db = server.runtime.services.db;
    const unused = (await register(server)).body.client_id ?? '';
    const used = (await register(server)).body.client_id ?? '';
    // The used one gets a grant (approved consent).
    const consent = await openConsent(
      jar,
      authorizeUrl(server, { client_id: used, redirect_uri: REDIRECT, code_challenge: pkce().challenge, state: 'u' }),
    );
    await approve(server, jar, consent, { shop, tier: 'observer' });
    const dayAndMore = Date.now() - 25 * 3_600_000;
    await db.run('UPDATE oauth_clients SET created_at = ? WHERE client_id IN (?, ?)', [dayAndMore, unused, used]);
    const stale = await go(
      jar,
      authorizeUrl(server, { client_id: unused, redirect_uri: REDIRECT, code_challenge: pkce().challenge, state: 'x' }),
    );
    expect(stale.status).toBe(400);
    expect(await stale.text()).toContain('<code>oauth_invalid_client</code>');
    await openConsent(
      jar,
      authorizeUrl(server, { client_id: used, redirect_uri: REDIRECT, code_challenge: pkce().challenge, state: 'y' }),
    );
    // The next registration purges expired clients.
    expect((await register(server)).status).toBe(201);
    const left = await db.all<{ client_id: string }>('SELECT client_id FROM oauth_clients WHERE client_id IN (?, ?)', [
      unused,
      used,
    ]);
    expect(left.map((r) => r.client_id)).toEqual([used]);
  });

  it(
    'without trusted proxies, X-Forwarded-For does not give a client a fresh per-address budget',
    async () => {
      await awayFromTheHourEdge();
      await server.runtime.services.db.run('DELETE FROM oauth_registration_counts');
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++)
        statuses.push((await register(server, { 'x-forwarded-for': `198.51.100.${i + 1}` })).status);
      expect(statuses.slice(0, 20).every((s) => s === 201)).toBe(true);
      expect(statuses[20]).toBe(429);
    },
    REGISTRATION_TEST_TIMEOUT_MS,
  );
});

describe('registration behind a trusted proxy, with a global cap', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      worker: false,
      env: { FLOWPORT_TRUSTED_PROXIES: '127.0.0.0/8, ::1', FLOWPORT_OAUTH_REGISTRATIONS_PER_HOUR: '25' },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it(
    'keys the per-address limit on the forwarded client address and stops every address at the global cap',
    async () => {
      await awayFromTheHourEdge();
      const from = (addr: string) => register(server, { 'x-forwarded-for': addr });
      for (let i = 0; i < 20; i++) expect((await from('203.0.113.7')).status).toBe(201);
      const limited = await from('203.0.113.7');
      expect(limited.status).toBe(429);
      expect(limited.body.flowport_code).toBe('oauth_registration_rate_limited');
      // A spoofed left-most entry changes nothing: the right-most untrusted hop is the client.
      expect((await from('192.0.2.1, 203.0.113.7')).status).toBe(429);
      // Another client behind the same proxy has its own budget (through a second trusted hop too).
      expect((await from('203.0.113.8, 127.0.0.1')).status).toBe(201);
      for (let i = 0; i < 4; i++) expect((await from(`203.0.113.${20 + i}`)).status).toBe(201);
      // 25 registrations this hour: the cap holds for every address.
      const capped = await from('203.0.113.99');
      expect(capped.status).toBe(429);
      expect(capped.body.flowport_code).toBe('oauth_registration_cap_reached');
      expect(capped.body.error_description).toContain('25');
      // Retry-After: the seconds left in this clock hour.
      const left = Number(capped.retryAfter);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(3600);
    },
    REGISTRATION_TEST_TIMEOUT_MS,
  );

  it(
    'holds the cap under concurrent registrations (counted by the store)',
    async () => {
      await awayFromTheHourEdge();
      await server.runtime.services.db.run('DELETE FROM oauth_registration_counts');
      const statuses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => register(server, { 'x-forwarded-for': `198.51.100.${i + 1}` })),
      );
      expect(statuses.filter((r) => r.status === 201)).toHaveLength(25);
      expect(
        statuses
          .filter((r) => r.status === 429)
          .every((r) => r.body.flowport_code === 'oauth_registration_cap_reached'),
      ).toBe(true);
    },
    REGISTRATION_TEST_TIMEOUT_MS,
  );
});

describe('the client address helper', () => {
  it('takes the socket peer unless it is a trusted proxy, then walks X-Forwarded-For right to left past trusted hops', () => {
    const trusted = parseTrustedProxies(['10.0.0.0/8', '192.0.2.5', '::1']);
    expect(resolveClientAddress('198.51.100.1', '203.0.113.1', trusted)).toBe('198.51.100.1');
    expect(resolveClientAddress('10.1.2.3', '203.0.113.1', trusted)).toBe('203.0.113.1');
    expect(resolveClientAddress('::ffff:10.1.2.3', '203.0.113.1', trusted)).toBe('203.0.113.1');
    expect(resolveClientAddress('10.1.2.3', '6.6.6.6, 203.0.113.1, 192.0.2.5', trusted)).toBe('203.0.113.1');
    expect(resolveClientAddress('::1', '2001:db8::1', trusted)).toBe('2001:db8::1');
    // All hops trusted: the left-most; nothing forwarded or garbage: the peer.
    expect(resolveClientAddress('10.1.2.3', '10.9.9.9', trusted)).toBe('10.9.9.9');
    expect(resolveClientAddress('10.1.2.3', undefined, trusted)).toBe('10.1.2.3');
    expect(resolveClientAddress('10.1.2.3', 'not-an-address', trusted)).toBe('10.1.2.3');
    expect(() => parseTrustedProxies(['10.0.0.0/33'])).toThrow(/FLOWPORT_TRUSTED_PROXIES/);
  });
});
