// Issue 40 (defects 3, 6, 7; point 3): one body limit and one input guard for every route. This
// suite walks the router: every route the real app registers (Hono's `app.routes`) and every
// operation of the registry, and for each checks over loopback that
// - a declared body over the route's limit is answered 413 at once, without the body being sent
//   (over a real socket: the point is what the server does before reading; the other checks call
//   the app in process);
// - a NUL in the query string, a JSON body or a form field is refused with 400 `invalid_characters`
//   (routes that verify a signature over the raw bytes check the fields they read: never 5xx);
// - a JSON body (or MCP tool arguments) with `__proto__` and `constructor` keys never answers 5xx;
// - a malformed multipart body (broken part, no boundary, cut short), with a grant or a merchant
//   session: 400 `invalid_request` from the guard (signed raw bodies: never 5xx);
// - without credentials it answers as its entry in AUTH says: a route missing from AUTH fails the
//   test, so a new route is classified (public or not) by whoever adds it.
// Runs on both stores (NUL reaches PostgreSQL as an error, SQLite stores it).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLimitFor } from '../../api/src/http/input-guard.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { INITIALIZE_2025, rawMcpPost } from '../mcp/helpers.ts';
import { sendExpectingEarlyAnswer } from '../helpers/early-answer.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { grant } from '../intents/helpers.ts';
import { csrfOf, go, install, uniqueShop } from '../shopify/helpers.ts';

let s: TestServer;
let admin: string;
let observer: string;
beforeAll(async () => {
  s = await startTestServer({ worker: false });
  admin = s.sandbox?.grant_token as string;
  observer = (await grant(s, 'observer', 'every-route observer')).token;
});
afterAll(async () => {
  await s?.close();
});

/**
 * How each route answers a request without credentials. `public`: anything but 5xx; the others
 * with the status they refuse with. The sandbox's stand-in is loopback-only (its own guard is
 * tested in loopback-guard.test.ts) and answers this loopback test as the local tools it serves.
 */
type Auth =
  | 'public'
  | 'grant'
  | 'merchant session'
  | 'shopify signature'
  | 'shopify id token'
  | 'sender signature'
  | 'signed callback'
  | 'share token'
  | 'loopback only'
  | 'shop parameter';
const UNAUTHENTICATED: Record<Exclude<Auth, 'public' | 'loopback only'>, number[]> = {
  grant: [401],
  'merchant session': [401],
  'shopify signature': [401],
  'shopify id token': [401],
  'sender signature': [401],
  'signed callback': [400],
  'share token': [404],
  'shop parameter': [400],
};

/** Every non-operation route, by `METHOD pattern` as Hono lists it (middleware entries included). */
const AUTH: Record<string, Auth> = {
  'ALL /*': 'public',
  'GET /*': 'public',
  'HEAD /*': 'public',
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'POST /in/:endpoint_id': 'sender signature',
  'ALL /in/:endpoint_id': 'public',
  'ALL /in/*': 'public',
  'ALL /sandbox/shopify/*': 'loopback only',
  'GET /sandbox/shopify/:shop/admin/oauth/authorize': 'loopback only',
  'POST /sandbox/shopify/:shop/admin/oauth/authorize': 'loopback only',
  'POST /sandbox/shopify/:shop/admin/oauth/access_token': 'loopback only',
  'POST /sandbox/shopify/:shop/admin/apps/flowport/uninstall': 'loopback only',
  'GET /sandbox/shopify/:shop/flow/workflows': 'loopback only',
  'POST /sandbox/shopify/:shop/flow/workflows': 'loopback only',
  'GET /sandbox/shopify/:shop/admin/apps/flowport': 'loopback only',
  'POST /sandbox/shopify/:shop/admin/apps/flowport/install': 'loopback only',
  'POST /sandbox/shopify/:shop/admin/session-token': 'loopback only',
  'GET /sandbox/shopify/app-bridge.js': 'loopback only',
  'GET /sandbox/shopify/polaris.js': 'loopback only',
  'GET /sandbox/shopify/triggers': 'loopback only',
  'DELETE /sandbox/shopify/triggers': 'loopback only',
  'GET /sandbox/shopify/_buckets': 'loopback only',
  'POST /sandbox/shopify/_buckets/:shop': 'loopback only',
  'DELETE /sandbox/shopify/_buckets/:shop': 'loopback only',
  'GET /sandbox/shopify/_faults': 'loopback only',
  'POST /sandbox/shopify/_faults/:shop': 'loopback only',
  'DELETE /sandbox/shopify/_faults/:shop': 'loopback only',
  'POST /sandbox/shopify/:shop/admin/api/:version/graphql.json': 'loopback only',
  'GET /shared/diagnostics/:token': 'share token',
  'POST /shopify/webhooks/compliance': 'shopify signature',
  'ALL /shopify/webhooks/compliance': 'shopify signature',
  'POST /shopify/webhooks/app-uninstalled': 'shopify signature',
  'POST /shopify/flow/lifecycle': 'shopify signature',
  'GET /shopify/install': 'shop parameter',
  'GET /merchant/sign-in': 'shop parameter',
  'GET /shopify/oauth/callback': 'signed callback',
  // The sign-in page when no session: public by design.
  'GET /merchant': 'public',
  // The embedded console (ADR 1450): a GET without a session token is the shell document (it
  // loads App Bridge, which brings the token); every page's HTML and every POST needs a token.
  'GET /merchant/console/console.js': 'public',
  'GET /merchant/console': 'public',
  'GET /merchant/console/events': 'public',
  'GET /merchant/console/events/:id': 'public',
  'GET /merchant/console/recover': 'public',
  'GET /merchant/console/intents/:id': 'public',
  'GET /merchant/console/refused': 'public',
  'GET /merchant/console/endpoints': 'public',
  'GET /merchant/console/endpoints/:id': 'public',
  'GET /merchant/console/grants': 'public',
  'GET /merchant/console/grants/:id/revoke': 'public',
  'GET /merchant/console/alerts': 'public',
  'GET /merchant/console/activity': 'public',
  'GET /merchant/console/*': 'public',
  'POST /merchant/console/events/:id/replay': 'shopify id token',
  'POST /merchant/console/recover/bulk': 'shopify id token',
  'POST /merchant/console/intents/:id/confirm': 'shopify id token',
  'POST /merchant/console/intents/:id/cancel': 'shopify id token',
  'POST /merchant/console/endpoints': 'shopify id token',
  'POST /merchant/console/endpoints/:id/edit': 'shopify id token',
  'POST /merchant/console/endpoints/:id/rotate': 'shopify id token',
  'POST /merchant/console/grants': 'shopify id token',
  'POST /merchant/console/grants/:id/revoke': 'shopify id token',
  'POST /merchant/console/alerts': 'shopify id token',
  'POST /merchant/console/alerts/:id/remove': 'shopify id token',
  'GET /merchant/*': 'public',
  // Sign-in by a Shopify id token (App Bridge's session token) in a form field or the header.
  'POST /merchant': 'shopify id token',
  'POST /merchant/grants': 'merchant session',
  'GET /merchant/grants/:grantId/revoke': 'merchant session',
  'POST /merchant/grants/:grantId/revoke': 'merchant session',
  'POST /merchant/sign-out': 'merchant session',
  // OAuth (RFC 6749/7591/7009/8414): a client needs nothing to register, redeem or revoke; the
  // consent page sends a browser without a session to sign in (303), its form needs the session.
  'ALL /oauth/register': 'public',
  'POST /oauth/register': 'public',
  'ALL /oauth/token': 'public',
  'POST /oauth/token': 'public',
  'ALL /oauth/revoke': 'public',
  'POST /oauth/revoke': 'public',
  'ALL /.well-known/oauth-authorization-server': 'public',
  'GET /.well-known/oauth-authorization-server': 'public',
  'GET /oauth/authorize': 'public',
  'POST /oauth/authorize': 'merchant session',
  'ALL /agent/v1/mcp': 'grant',
  'GET /.well-known/oauth-protected-resource/agent/v1/mcp': 'public',
  'GET /.well-known/oauth-protected-resource': 'public',
  'GET /.well-known/oauth-protected-resource/agent/v1': 'public',
  // Loopback peers only unless configured otherwise (this test is a loopback peer).
  'GET /metrics': 'loopback only',
  // API misses: problem+json 404/405.
  'ALL /agent/v1/*': 'public',
  'ALL /agent/v1': 'public',
};

const honoPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');
const OPERATION_AUTH = new Map<string, Auth>(
  OPERATIONS.map((op) => [`${op.method.toUpperCase()} ${honoPath(op.path)}`, op.scope === null ? 'public' : 'grant']),
);

interface Route {
  key: string;
  method: string;
  pattern: string;
  auth: Auth | undefined;
}

function routes(): Route[] {
  const seen = new Map<string, Route>();
  for (const r of s.runtime.app.routes) {
    const key = `${r.method} ${r.path}`;
    if (!seen.has(key))
      seen.set(key, { key, method: r.method, pattern: r.path, auth: OPERATION_AUTH.get(key) ?? AUTH[key] });
  }
  return [...seen.values()];
}

/** A concrete path for a pattern: the sandbox's real endpoint for intake, a placeholder elsewhere. */
function concrete(pattern: string): string {
  if (pattern === '/in/:endpoint_id') return `/in/${s.sandbox?.endpoint_id}`;
  return pattern.replace(/:(\w+)/g, (_m, name: string) => `${name}_x1`).replace(/\*/g, 'x1');
}
const methodsOf = (r: Route) => (r.method === 'ALL' ? ['GET', 'POST'] : [r.method]);
const takesBody = (m: string) => m !== 'GET' && m !== 'HEAD';

/**
 * The app in process (`app.request`): the checks that are not about the socket skip it. Routes
 * that need a loopback peer (the sandbox stand-in, /metrics) refuse such a request after the
 * guard, which is what these checks look at.
 */
const inProcess = (path: string, init: RequestInit) => s.runtime.app.request(`${s.url}${path}`, init);

async function answer(res: Response) {
  const text = await res.text();
  let code = '';
  try {
    code = (JSON.parse(text) as { code?: string }).code ?? '';
  } catch {}
  return { status: res.status, code, text: text.slice(0, 300) };
}

/** Sends only a request head declaring a huge body; resolves with the status line, or null if none came in time. */
function declaredHuge(method: string, path: string, length: number, ms = 3_000): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: s.port, host: '127.0.0.1' });
    let got = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(null);
    }, ms);
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(got.split('\r\n')[0] ?? '');
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (got) resolve(got.split('\r\n')[0] ?? '');
      else reject(err);
    });
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
    );
  });
}

/** Routes that verify a signature over the raw bytes (the guard's table says so): they read their own fields. */
const rawBody = (path: string) => bodyLimitFor(path, s.runtime.config).body === 'raw';

/** Form bodies no parser can read: a broken part, no boundary, a part cut short. */
const MALFORMED_FORMS = [
  { name: 'broken part', type: 'multipart/form-data; boundary=XX', body: '--XX\r\nbroken\r\n--XX--\r\n' },
  { name: 'no boundary', type: 'multipart/form-data', body: 'token=abc' },
  {
    name: 'part cut short',
    type: 'multipart/form-data; boundary=XX',
    body: '--XX\r\nContent-Disposition: form-data; name="token"\r\n\r\nabc',
  },
];

// Inside the walks, soft assertions: a run reports every route that fails, not only the first.
describe('walking the router', () => {
  it('every route is classified (public or the credential it needs), and every operation is routed', () => {
    const all = routes();
    const unclassified = all.filter((r) => r.auth === undefined).map((r) => r.key);
    expect(unclassified, 'add each new route to AUTH in this file').toEqual([]);
    const keys = new Set(all.map((r) => r.key));
    for (const key of OPERATION_AUTH.keys()) expect(keys.has(key), key).toBe(true);
    expect(all.length).toBeGreaterThan(60);
  });

  it('without credentials each route answers as AUTH says (public routes are listed, never guessed)', async () => {
    for (const r of routes()) {
      for (const method of methodsOf(r)) {
        const a = await answer(
          await inProcess(concrete(r.pattern), {
            method,
            redirect: 'manual',
            ...(takesBody(method) ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
          }),
        );
        expect.soft(a.status, `${method} ${r.key}: ${a.text}`).not.toBe(500);
        if (r.auth === 'public' || r.auth === 'loopback only' || r.auth === undefined) continue;
        // An ALL entry also matches methods its route refuses with 405 first.
        if (r.method === 'ALL' && a.status === 405) continue;
        expect.soft(UNAUTHENTICATED[r.auth], `${method} ${r.key} (${r.auth}): ${a.text}`).toContain(a.status);
      }
    }
  });

  it('a declared body over the limit is answered 413 at once, the body never sent (every route, any method)', async () => {
    const huge = 400 * 1024 * 1024;
    const started = performance.now();
    for (const r of routes()) {
      for (const method of methodsOf(r)) {
        const path = concrete(r.pattern);
        const line = await declaredHuge(method, path, huge);
        expect.soft(line, `${method} ${path}: no answer without the body`).not.toBeNull();
        // Intake's routes other than an endpoint's answer their 404 without reading either.
        if (path.startsWith('/in/') && path !== `/in/${s.sandbox?.endpoint_id}`) {
          expect.soft(line, `${method} ${path}`).toMatch(/^HTTP\/1\.1 4\d\d /);
          continue;
        }
        // A GET to intake's endpoint answers 405 (intake takes POST only) before any body.
        expect.soft(line, `${method} ${path}`).toMatch(path.startsWith('/in/') && method === 'GET' ? / 405 / : / 413 /);
      }
    }
    // Nothing waited for 400 MiB: the whole walk takes seconds.
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  it('every route has a limit from the one table, and the table states intake and webhook limits', () => {
    for (const r of routes()) {
      const limit = bodyLimitFor(concrete(r.pattern), s.runtime.config);
      expect(limit.maxBytes, r.key).toBeGreaterThan(0);
      expect(limit.maxBytes, r.key).toBeLessThanOrEqual(s.runtime.config.intake.maxBodyBytes);
    }
    expect(bodyLimitFor(`/in/${s.sandbox?.endpoint_id}`, s.runtime.config)).toMatchObject({
      maxBytes: s.runtime.config.intake.maxBodyBytes,
      body: 'raw',
    });
    expect(bodyLimitFor('/oauth/register', s.runtime.config).maxBytes).toBeLessThanOrEqual(64 * 1024);
  });

  it('a NUL in the query string: 400 invalid_characters on every route, before authentication', async () => {
    for (const r of routes()) {
      for (const method of methodsOf(r)) {
        for (const query of ['x=%00', 'x=a%00b', `${encodeURIComponent('k\u0000')}=1`, 'x=%1b%5b31m']) {
          const a = await answer(
            await inProcess(`${concrete(r.pattern)}?${query}`, {
              method,
              redirect: 'manual',
              ...(takesBody(method) ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}),
            }),
          );
          // A HEAD answer has no body to name the code.
          expect
            .soft([a.status, a.code], `${method} ${r.key}?${query}: ${a.text}`)
            .toEqual(method === 'HEAD' ? [400, ''] : [400, 'invalid_characters']);
        }
      }
    }
  });

  it('a NUL in a JSON body or a form field: 400 invalid_characters (signed raw bodies: never 5xx)', async () => {
    const bodies = [
      { type: 'application/json', body: JSON.stringify({ client_name: 'a\u0000b', redirect_uris: ['x'] }) },
      { type: 'application/json', body: JSON.stringify({ nested: [{ 'k\u0000': 1 }] }) },
      { type: 'application/x-www-form-urlencoded', body: 'grant_type=authorization_code&code=%00' },
      { type: 'application/x-www-form-urlencoded', body: 'actor_name=a%01b' },
    ];
    for (const r of routes()) {
      for (const method of methodsOf(r).filter(takesBody)) {
        const path = concrete(r.pattern);
        for (const b of bodies) {
          const a = await answer(
            await inProcess(path, {
              method,
              redirect: 'manual',
              headers: { 'content-type': b.type, authorization: `Bearer ${admin}` },
              body: b.body,
            }),
          );
          expect.soft(a.status, `${method} ${r.key} ${b.body}: ${a.text}`).toBeLessThan(500);
          if (rawBody(path)) continue;
          expect
            .soft([a.status, a.code], `${method} ${r.key} ${b.body}: ${a.text}`)
            .toEqual([400, 'invalid_characters']);
        }
      }
    }
  });

  it('a malformed multipart (or form) body: 400 invalid_request on every route that reads one, never 5xx', async () => {
    const jar = await install(s, uniqueShop('multipart'));
    for (const r of routes()) {
      for (const method of methodsOf(r).filter(takesBody)) {
        const path = concrete(r.pattern);
        for (const b of MALFORMED_FORMS) {
          for (const who of ['grant', 'session'] as const) {
            const headers: Record<string, string> = { 'content-type': b.type, origin: s.url };
            if (who === 'grant') headers.authorization = `Bearer ${admin}`;
            else headers.cookie = jar.header();
            const a = await answer(await inProcess(path, { method, redirect: 'manual', headers, body: b.body }));
            expect.soft(a.status, `${method} ${r.key} ${b.name} (${who}): ${a.text}`).toBeLessThan(500);
            if (rawBody(path)) continue;
            expect
              .soft([a.status, a.code], `${method} ${r.key} ${b.name} (${who}): ${a.text}`)
              .toEqual([400, 'invalid_request']);
          }
        }
      }
    }
  });

  it('`__proto__` and `constructor` as JSON keys or query names are plain data: never 5xx, with a grant', async () => {
    const body = '{"__proto__":{"x":1},"constructor":1,"nested":{"__proto__":[1],"constructor":{"prototype":2}}}';
    for (const r of routes()) {
      for (const method of methodsOf(r)) {
        for (const token of [admin, observer]) {
          const a = await answer(
            await inProcess(`${concrete(r.pattern)}${takesBody(method) ? '' : '?__proto__=1&constructor=2'}`, {
              method,
              redirect: 'manual',
              headers: {
                authorization: `Bearer ${token}`,
                ...(takesBody(method) ? { 'content-type': 'application/json' } : {}),
              },
              ...(takesBody(method) ? { body } : {}),
            }),
          );
          expect.soft(a.status, `${method} ${r.key}: ${a.text}`).not.toBe(500);
          expect.soft(a.code, `${method} ${r.key}`).not.toBe('internal_error');
        }
      }
    }
  });

  it('MCP: every tool called with `__proto__` and `constructor` arguments by an observer: a tool error, never 5xx', async () => {
    const headers = { authorization: `Bearer ${observer}` };
    const init = await rawMcpPost(s.url, INITIALIZE_2025, headers);
    expect(init.status).toBe(200);
    await init.text();
    const tools = OPERATIONS.filter((op) => op.mcp).map((op) => op.mcp?.name as string);
    expect(tools.length).toBeGreaterThan(10);
    for (const name of tools) {
      const call = JSON.parse(
        `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"${name}","arguments":{"__proto__":{"x":1},"constructor":1}}}`,
      );
      const res = await rawMcpPost(s.url, call, { ...headers, 'mcp-protocol-version': '2025-11-25' });
      const text = await res.text();
      expect.soft(res.status, `${name}: ${text.slice(0, 300)}`).toBe(200);
      expect.soft(text, name).not.toContain('internal_error');
      expect.soft(text, name).toMatch(/"isError":true|"error":/);
    }
  });
});

describe('merchant and OAuth pages with a session: a NUL never reaches the store', () => {
  it('a grant whose actor name holds a NUL is refused, and no grant is stored', async () => {
    const jar = await install(s, uniqueShop('nul'));
    const page = await go(jar, `${s.url}/merchant`);
    const csrf = csrfOf(await page.text());
    const before = await s.runtime.services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM grants');
    for (const name of ['a\u0000b', 'x\u001b[31m']) {
      const form = new URLSearchParams({
        csrf_token: csrf,
        tier: 'observer',
        actor_kind: 'agent',
        actor_name: name,
        expires_in_days: '7',
      });
      const a = await answer(
        await go(jar, `${s.url}/merchant/grants`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
          body: form.toString(),
        }),
      );
      expect([a.status, a.code], a.text).toEqual([400, 'invalid_characters']);
    }
    const after = await s.runtime.services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM grants');
    expect(Number(after?.n)).toBe(Number(before?.n));
    const stored = await s.runtime.services.db.all<{ actor_name: string }>('SELECT actor_name FROM grants');
    expect(stored.filter((g) => g.actor_name.includes('\u0000'))).toEqual([]);
  });

  it('the consent page opened by a link with a NUL, and a registration naming one: 400, nothing stored', async () => {
    const jar = await install(s, uniqueShop('nulauth'));
    const link = await answer(
      await go(jar, `${s.url}/oauth/authorize?response_type=code&client_id=${encodeURIComponent('c\u0000')}`),
    );
    expect([link.status, link.code], link.text).toEqual([400, 'invalid_characters']);
    const before = await s.runtime.services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_clients');
    const reg = await answer(
      await fetch(`${s.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'evil\u0000', redirect_uris: ['http://127.0.0.1:9/cb'] }),
      }),
    );
    expect([reg.status, reg.code], reg.text).toEqual([400, 'invalid_characters']);
    const after = await s.runtime.services.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_clients');
    expect(Number(after?.n)).toBe(Number(before?.n));
  });
});

describe('a body sent without a Content-Length is cut at the limit', () => {
  it('OAuth (no credentials needed), the consent and merchant forms, MCP: 413, the connection closed', async () => {
    const cases = [
      { path: '/oauth/register', type: 'application/json', start: '{"client_name":"' },
      { path: '/oauth/token', type: 'application/x-www-form-urlencoded', start: 'code=' },
      { path: '/oauth/revoke', type: 'application/x-www-form-urlencoded', start: 'token=' },
      { path: '/oauth/authorize', type: 'application/x-www-form-urlencoded', start: 'consent_id=' },
      { path: '/merchant/grants', type: 'application/x-www-form-urlencoded', start: 'actor_name=' },
      { path: '/agent/v1/mcp', type: 'application/json', start: '{"jsonrpc":"2.0","method":"' },
    ];
    for (const c of cases) {
      const limit = bodyLimitFor(c.path, s.runtime.config).maxBytes;
      const a = await sendExpectingEarlyAnswer(`${s.url}${c.path}`, {
        headers: { 'content-type': c.type },
        body: c.start,
        chunked: { total: 16 * limit },
      });
      expect(a.status, `${c.path}: ${a.text}`).toBe(413);
      expect(JSON.parse(a.text).code).toBe('payload_too_large');
      expect(a.headers.connection).toBe('close');
    }
  });
});
