// Single use means single use (issue 40, ADR 1420): an authorization code, a refresh token, a
// consent and a Shopify install state are each consumed by one conditional write, so of 20
// simultaneous redemptions over real HTTP on loopback exactly one wins, on both stores
// (FLOWPORT_TEST_STORE=postgres runs the same file on PostgreSQL, where the requests really run in
// parallel transactions). A replayed code revokes what the code issued; a reused refresh token
// revokes its whole family — after a race, the winner's new tokens too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { authorize, CookieJar, go, install, uniqueShop } from '../shopify/helpers.ts';
import { oauthDriver, type TokenAnswer } from './helpers.ts';

const RACERS = 20;

let server: TestServer;
let oauth: ReturnType<typeof oauthDriver>;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  oauth = oauthDriver(server, await install(server, uniqueShop('single-use')));
});
afterAll(async () => {
  await server?.close();
});

/** Fires `n` calls at once (all sent before any answer is awaited). */
const race = <T>(n: number, fn: () => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: n }, fn));

/** Exactly one success; every other answer is the token endpoint's invalid_grant, in its usual format. */
function oneWinner(answers: TokenAnswer[]): TokenAnswer {
  const winners = answers.filter((a) => a.status === 200);
  expect(winners.length, JSON.stringify(answers.map((a) => [a.status, a.body.error]))).toBe(1);
  for (const a of answers.filter((x) => x.status !== 200)) {
    expect(a.status, JSON.stringify(a.body)).toBe(400);
    expect(a.body).toMatchObject({ error: 'invalid_grant', flowport_code: 'oauth_invalid_grant' });
    expect(a.body.docs_url).toContain('/reference/errors/oauth_invalid_grant/');
    expect(a.body.access_token).toBeUndefined();
  }
  return winners[0] as TokenAnswer;
}

const agentApi = (accessToken: string | undefined) =>
  fetch(`${server.url}/agent/v1/grant`, { headers: { authorization: `Bearer ${accessToken ?? ''}` } });

/** The client's tokens in the store: how many, and how many are still live (not revoked). */
async function tokensOf(clientId: string): Promise<{ all: number; live: number }> {
  const row = await server.runtime.services.db.get<{ all_n: number; live_n: number }>(
    `SELECT COUNT(*) AS all_n, SUM(CASE WHEN revoked_at IS NULL THEN 1 ELSE 0 END) AS live_n
       FROM oauth_tokens WHERE client_id = ?`,
    [clientId],
  );
  return { all: Number(row?.all_n ?? 0), live: Number(row?.live_n ?? 0) };
}

describe('an authorization code', () => {
  it(`redeemed ${RACERS} times at once: one pair is issued, the other redemptions are invalid_grant, and the replay revokes that pair`, async () => {
    const c = await oauth.codeFor();
    const answers = await race(RACERS, () => oauth.exchange(c));
    const won = oneWinner(answers);
    expect(won.body.access_token).toMatch(/^fpa_/);
    // Exactly one pair was ever issued for the code, and the replays ended it.
    expect(await tokensOf(c.clientId)).toEqual({ all: 2, live: 0 });
    const api = await agentApi(won.body.access_token);
    expect(api.status).toBe(401);
    const after = await oauth.refresh(c.clientId, won.body.refresh_token ?? '');
    expect(after.status).toBe(400);
    expect(after.body.error).toBe('invalid_grant');
  });

  it('redeemed twice in turn: the second is invalid_grant and the first pair stops working', async () => {
    const c = await oauth.codeFor();
    const first = await oauth.exchange(c);
    expect(first.status).toBe(200);
    expect((await agentApi(first.body.access_token)).status).toBe(200);
    const second = await oauth.exchange(c);
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ error: 'invalid_grant', flowport_code: 'oauth_invalid_grant' });
    expect((await agentApi(first.body.access_token)).status).toBe(401);
    expect(await tokensOf(c.clientId)).toEqual({ all: 2, live: 0 });
  });
});

describe('a refresh token', () => {
  it(`used ${RACERS} times at once: one rotation, the rest invalid_grant, and reuse detection revokes the whole family, the winner's new pair too`, async () => {
    const c = await oauth.codeFor();
    const issued = await oauth.exchange(c);
    expect(issued.status).toBe(200);
    expect((await agentApi(issued.body.access_token)).status).toBe(200);
    const answers = await race(RACERS, () => oauth.refresh(c.clientId, issued.body.refresh_token ?? ''));
    const won = oneWinner(answers);
    expect(won.body.refresh_token).toMatch(/^fpr_/);
    // One rotation: the first pair and the winner's pair, all revoked.
    expect(await tokensOf(c.clientId)).toEqual({ all: 4, live: 0 });
    const api = await agentApi(won.body.access_token);
    expect(api.status).toBe(401);
    expect((await agentApi(issued.body.access_token)).status).toBe(401);
    const next = await oauth.refresh(c.clientId, won.body.refresh_token ?? '');
    expect(next.status).toBe(400);
    expect(next.body.error).toBe('invalid_grant');
    // The reuse is in the audit log of the grant.
    const audit = await server.runtime.services.db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM audit_log a JOIN oauth_tokens t ON t.grant_id = a.target_id
        WHERE a.action = 'oauth.refresh_reuse' AND t.client_id = ? AND t.token_hint LIKE 'fpr_%'`,
      [c.clientId],
    );
    expect(Number(audit?.n)).toBeGreaterThan(0);
  });
});

describe('a revocation racing a refresh', () => {
  it('RFC 7009 revocation sent with a refresh of the same family leaves no live token, whichever runs first', async () => {
    const rounds = await race(8, async () => {
      const c = await oauth.codeFor();
      const issued = await oauth.exchange(c);
      expect(issued.status).toBe(200);
      const [refreshed] = await Promise.all([
        oauth.refresh(c.clientId, issued.body.refresh_token ?? ''),
        fetch(`${server.url}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: issued.body.access_token ?? '' }).toString(),
        }).then((r) => expect(r.status).toBe(200)),
      ]);
      return { clientId: c.clientId, refreshed };
    });
    for (const r of rounds) {
      expect((await tokensOf(r.clientId)).live).toBe(0);
      if (r.refreshed.status === 200) expect((await agentApi(r.refreshed.body.access_token)).status).toBe(401);
      else expect(r.refreshed.body.error).toBe('invalid_grant');
    }
  });
});

describe('a consent', () => {
  it(`approved ${RACERS} times at once: one code and one grant, the other answers oauth_consent_expired`, async () => {
    const c = await oauth.consent();
    const answers = await race(RACERS, async () => {
      const res = await oauth.decide(c.form);
      return { status: res.status, location: res.headers.get('location'), text: await res.text() };
    });
    const won = answers.filter((a) => a.status === 303);
    expect(won.length, JSON.stringify(answers.map((a) => a.status))).toBe(1);
    expect(new URL(won[0]?.location ?? '').searchParams.get('code')).toMatch(/^fpcode_/);
    for (const a of answers.filter((x) => x.status !== 303)) {
      expect(a.status).toBe(403);
      expect(a.text).toContain('<code>oauth_consent_expired</code>');
    }
    const codes = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM oauth_codes WHERE client_id = ?',
      [c.clientId],
    );
    expect(Number(codes?.n)).toBe(1);
    const grants = await server.runtime.services.db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM grants WHERE actor_client = ?',
      [c.clientId],
    );
    expect(Number(grants?.n)).toBe(1);
  });
});

describe('the Shopify install state', () => {
  it(`the same callback ${RACERS} times at once, with the state cookie: one install and one session, the rest shopify_oauth_state_invalid`, async () => {
    const shop = uniqueShop('state-race');
    const jar = new CookieJar();
    const callback = await authorize(server, jar, shop);
    const cookie = jar.header();
    expect(cookie).toContain('flowport_oauth_state=');
    const answers = await race(RACERS, async () => {
      const res = await fetch(callback, { headers: { cookie }, redirect: 'manual' });
      return { status: res.status, text: await res.text() };
    });
    const won = answers.filter((a) => a.status === 303);
    expect(won.length, JSON.stringify(answers.map((a) => a.status))).toBe(1);
    for (const a of answers.filter((x) => x.status !== 303)) {
      expect(a.status).toBe(400);
      expect(a.text).toContain('<code>shopify_oauth_state_invalid</code>');
    }
    const db = server.runtime.services.db;
    const installs = await db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM audit_log a JOIN shops s ON s.id = a.shop_id
        WHERE s.domain = ? AND a.action IN ('shop.install', 'shop.reinstall')`,
      [shop],
    );
    expect(Number(installs?.n)).toBe(1);
    const sessions = await db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM merchant_sessions m JOIN shops s ON s.id = m.shop_id WHERE s.domain = ?',
      [shop],
    );
    expect(Number(sessions?.n)).toBe(1);
    // Used again later (the spent state is remembered until it would have expired).
    const again = await go(new CookieJar(), callback, { headers: { cookie } });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('<code>shopify_oauth_state_invalid</code>');
    expect(SHOPIFY_APP_PATHS.oauthCallback).toBe(new URL(callback).pathname);
  });
});
