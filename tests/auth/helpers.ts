// OAuth test helpers (issue 28): an MCP client's OAuthClientProvider kept in memory, Client ID
// Metadata Documents served over https on loopback, and a driver for the consent and token endpoints.
import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import { generate as selfSigned } from 'selfsigned';
import { AGENT_API_PREFIX } from '../../api/src/lib/package-info.ts';
import type { TestServer } from '../helpers/runtime.ts';
import { type CookieJar, go } from '../shopify/helpers.ts';

/** What the provider's callbacks saved: the client, the tokens, the PKCE verifier, the authorization URL. */
export interface ProviderState {
  client?: { client_id: string };
  tokens?: { access_token: string };
  verifier?: string;
  url?: URL;
}

/**
 * A public client's provider that keeps everything in `state` and, instead of opening a browser,
 * saves the authorization URL. With `clientMetadataUrl` the SDK uses that URL as client_id
 * (a Client ID Metadata Document) when the server supports it; without it, it registers
 * dynamically with `clientName`. Typed as the v2 SDK's provider; the v1 SDK takes the same shape.
 */
export function memoryProvider(opts: { redirectUrl: string; clientName: string; clientMetadataUrl?: string }): {
  provider: OAuthClientProvider;
  state: ProviderState;
  /** The access token saveTokens last saved ('' if none). */
  accessToken: () => string;
} {
  const state: ProviderState = {};
  const provider = {
    get redirectUrl() {
      return opts.redirectUrl;
    },
    ...(opts.clientMetadataUrl ? { clientMetadataUrl: opts.clientMetadataUrl } : {}),
    get clientMetadata() {
      return { client_name: opts.clientName, redirect_uris: [opts.redirectUrl], token_endpoint_auth_method: 'none' };
    },
    clientInformation: () => state.client,
    saveClientInformation: (c: { client_id: string }) => {
      state.client = c;
    },
    tokens: () => state.tokens,
    saveTokens: (t: { access_token: string }) => {
      state.tokens = t;
    },
    redirectToAuthorization: (url: URL) => {
      state.url = url;
    },
    saveCodeVerifier: (v: string) => {
      state.verifier = v;
    },
    codeVerifier: () => state.verifier ?? '',
  } as unknown as OAuthClientProvider;
  return { provider, state, accessToken: () => state.tokens?.access_token ?? '' };
}

/** A fetch for the SDK's `fetchFn` that records each request as "METHOD /path" in `calls`. */
export function recordingFetch(calls: string[]): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push(`${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${url.pathname}`);
    return fetch(input, init);
  };
}

export interface MetadataDocumentServer {
  /** The document URL (the client_id) for a slug: https://127.0.0.1:<port>/clients/<slug>.json. */
  urlOf(slug: string): string;
  /** The client_name in the slug's document (what the consent page must show). */
  nameOf(slug: string): string;
  /** How often each slug's document was fetched. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Serves a Client ID Metadata Document for any slug, listing `redirectUris`, over https on
 * 127.0.0.1 with a certificate made here.
 *
 * The SDKs send a metadata document URL as client_id only if it is https. Flowport fetches the
 * document with Node's fetch, which trusts Node's CA store; an operator adds a private CA to that
 * store with NODE_EXTRA_CA_CERTS. The test's Flowport runs in the test process, so this adds the
 * certificate to the same store with tls.setDefaultCACertificates (what NODE_EXTRA_CA_CERTS does
 * at start-up). Flowport's code and configuration are unchanged, and only the test process trusts
 * the certificate. The SSRF guard (lib/outbound-target.ts) refuses loopback documents outside
 * sandbox mode; test servers run in sandbox mode, the one exception, so 127.0.0.1 is fetched.
 */
export async function serveMetadataDocuments(redirectUris: string[]): Promise<MetadataDocumentServer> {
  const pems = await selfSigned([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  setDefaultCACertificates([...getCACertificates('default'), pems.cert]);
  let origin = '';
  const hits = new Map<string, number>();
  const urlOf = (slug: string) => `${origin}/clients/${slug}.json`;
  const nameOf = (slug: string) => `Metadata document ${slug} agent`;
  const docs: Server = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    const slug = /^\/clients\/([a-z0-9-]+)\.json$/.exec(req.url ?? '')?.[1];
    if (!slug) return res.writeHead(404).end();
    hits.set(slug, (hits.get(slug) ?? 0) + 1);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        client_id: urlOf(slug),
        client_name: nameOf(slug),
        redirect_uris: redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
  await new Promise<void>((r) => docs.listen(0, '127.0.0.1', r));
  const addr = docs.address();
  origin = `https://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  return { urlOf, nameOf, hits, close: () => new Promise((r) => docs.close(() => r())) };
}

/** A PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A token endpoint answer: the status and the JSON body (tokens, or an RFC 6749 §5.2 error). */
export interface TokenAnswer {
  status: number;
  body: Record<string, string>;
}

/**
 * Drives Flowport's OAuth server over HTTP as a registered public client would, with the merchant
 * signed in in `jar`: register, open the consent page, approve, and call the token endpoint.
 */
export function oauthDriver(server: TestServer, jar: CookieJar, redirect = 'http://127.0.0.1:9/callback') {
  const apiResource = `${server.url}${AGENT_API_PREFIX}`;
  async function register(): Promise<string> {
    const res = await fetch(`${server.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Test agent', redirect_uris: [redirect] }),
    });
    if (res.status !== 201) throw new Error(`register answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { client_id: string }).client_id;
  }
  /** Opens the consent page for a new client; returns what its form posts back. */
  async function consent(resource = apiResource) {
    const clientId = await register();
    const { verifier, challenge } = pkcePair();
    const url = new URL(`${server.url}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      code_challenge_method: 'S256',
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: challenge,
      scope: 'observer',
      resource,
    }))
      url.searchParams.set(k, v);
    const res = await go(jar, url.toString());
    const html = await res.text();
    if (res.status !== 200) throw new Error(`consent page answered ${res.status}: ${html.slice(0, 400)}`);
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? '';
    const form = new URLSearchParams({
      csrf_token: field('csrf_token'),
      consent_id: field('consent_id'),
      shop: field('shop'),
      tier: 'observer',
      expires_in_days: '7',
      decision: 'approve',
    });
    return { clientId, verifier, resource, form };
  }
  /** Posts a consent form (approve) in the merchant's session. */
  const decide = (form: URLSearchParams) =>
    go(jar, `${server.url}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: form.toString(),
    });
  /** A new client's authorization code, approved by the merchant. */
  async function codeFor(resource = apiResource) {
    const c = await consent(resource);
    const res = await decide(c.form);
    if (res.status !== 303) throw new Error(`consent answered ${res.status}`);
    const code = new URL(res.headers.get('location') ?? '').searchParams.get('code');
    if (!code) throw new Error('the consent redirect carries no code');
    return { clientId: c.clientId, verifier: c.verifier, resource, code };
  }
  async function token(form: Record<string, string>): Promise<TokenAnswer> {
    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }
  const exchange = (c: { clientId: string; verifier: string; code: string; resource: string }) =>
    token({
      grant_type: 'authorization_code',
      code: c.code,
      client_id: c.clientId,
      redirect_uri: redirect,
      code_verifier: c.verifier,
      resource: c.resource,
    });
  const refresh = (clientId: string, refreshToken: string) =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
  return { apiResource, register, consent, decide, codeFor, token, exchange, refresh };
}

/**
 * Registrations are counted per clock hour: a test that counts up to a limit waits out the last
 * minute of an hour, so its count never straddles two windows. Give such a test a timeout over
 * a minute (REGISTRATION_TEST_TIMEOUT_MS).
 */
export async function awayFromTheHourEdge(): Promise<void> {
  const left = 3_600_000 - (Date.now() % 3_600_000);
  if (left < 60_000) await new Promise((r) => setTimeout(r, left + 1_000));
}
export const REGISTRATION_TEST_TIMEOUT_MS = 120_000;
