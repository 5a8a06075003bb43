// The Shopify app's side of Flowport, as plain facts and functions every floor may use: its
// credentials, the paths shopify.app.toml declares, where a store's admin is, and the two ways
// Shopify signs what it sends (ADR 1200). In sandbox mode without configured
// credentials the app uses the sandbox app's own client id and secret, generated once in the data
// dir, so the install path works with no setup; the sandbox's Shopify stand-in signs with them.
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, isSandbox } from '../config.ts';
import { MERCHANT_PATH } from '../entry-points.ts';
import { safeEqual } from './crypto.ts';

/** Where the sandbox's Shopify stand-in is mounted in a Flowport server (sandbox mode). */
export const SANDBOX_MOUNT_PATH = '/sandbox/shopify';

/** Every URL path shopify.app.toml points Shopify at (tests/shopify/app-config.test.ts checks them). */
export const SHOPIFY_APP_PATHS = {
  /** application_url: where Shopify sends a merchant who opens the app. */
  merchant: MERCHANT_PATH,
  install: '/shopify/install',
  oauthCallback: '/shopify/oauth/callback',
  appUninstalledWebhook: '/shopify/webhooks/app-uninstalled',
  flowLifecycle: '/shopify/flow/lifecycle',
} as const;

/** Token exchange (Shopify-managed installation): the grant and token types Shopify's token endpoint takes. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
export const OFFLINE_TOKEN_TYPE = 'urn:shopify:params:oauth:token-type:offline-access-token';
export const ONLINE_TOKEN_TYPE = 'urn:shopify:params:oauth:token-type:online-access-token';

/** Where embedded pages load App Bridge and Polaris web components from (production; the sandbox serves stand-ins). */
export const APP_BRIDGE_CDN_URL = 'https://cdn.shopify.com/shopifycloud/app-bridge.js';
export const POLARIS_CDN_URL = 'https://cdn.shopify.com/shopifycloud/polaris.js';

export const SANDBOX_APP_FILE = 'sandbox-app.json';

export interface ShopifyAppCredentials {
  clientId: string;
  clientSecret: string;
  /** True when these are the sandbox app's generated credentials. */
  sandbox: boolean;
}

const cache = new WeakMap<Config, ShopifyAppCredentials | null>();

/**
 * The app's client id and secret: the configured ones, or (sandbox mode, none configured) the
 * sandbox app's, kept in <dataDir>/sandbox-app.json (0600). Null: the install path is refused.
 */
export function shopifyAppCredentials(config: Config): ShopifyAppCredentials | null {
  if (cache.has(config)) return cache.get(config) ?? null;
  let out: ShopifyAppCredentials | null = null;
  const { clientId, clientSecret } = config.shopify;
  if (clientId && clientSecret) out = { clientId, clientSecret, sandbox: false };
  else if (isSandbox(config)) {
    const file = join(config.dataDir, SANDBOX_APP_FILE);
    let saved: { client_id: string; client_secret: string } | null = null;
    if (existsSync(file))
      saved = JSON.parse(readFileSync(file, 'utf8')) as { client_id: string; client_secret: string };
    if (!saved) {
      saved = {
        client_id: `sandbox-${randomBytes(8).toString('hex')}`,
        client_secret: `shpss_sandbox_${randomBytes(16).toString('hex')}`,
      };
      writeFileSync(file, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
      chmodSync(file, 0o600);
    }
    out = { clientId: clientId ?? saved.client_id, clientSecret: clientSecret ?? saved.client_secret, sandbox: true };
  }
  cache.set(config, out);
  return out;
}

/** Where the in-process sandbox listens (loopback, so the worker never leaves the machine). */
export function localSandboxBaseUrl(config: Config): string {
  return `http://127.0.0.1:${config.port}${SANDBOX_MOUNT_PATH}`;
}

/** Where this server calls a store's Admin API and OAuth token endpoint (the in-process stand-in in sandbox mode). */
export function adminApiOrigin(config: Config, domain: string): string {
  if (isSandbox(config)) return `${localSandboxBaseUrl(config)}/${domain}`;
  return (config.shopify.adminBaseUrl ?? 'https://{shop}').replace('{shop}', domain);
}

/** Where the browser goes for a shop's admin pages (authorize): the store, or the sandbox's stand-in. */
export function shopAdminOrigin(config: Config, domain: string): string {
  if (isSandbox(config)) return `${config.publicUrl.replace(/\/+$/, '')}${SANDBOX_MOUNT_PATH}/${domain}`;
  return (config.shopify.adminBaseUrl ?? 'https://{shop}').replace('{shop}', domain);
}

/**
 * The message Shopify signs in an OAuth redirect's query: every parameter but `hmac` (and the
 * legacy `signature`), sorted by name, form-encoded and joined `k=v&…` (as @shopify/shopify-api).
 */
export function oauthQueryMessage(params: URLSearchParams): string {
  const entries = [...params.entries()].filter(([k]) => k !== 'hmac' && k !== 'signature');
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new URLSearchParams(entries).toString();
}

export function signOAuthQuery(secret: string, params: URLSearchParams): string {
  return createHmac('sha256', secret).update(oauthQueryMessage(params)).digest('hex');
}

/** The query's `hmac` against the client secret, in constant time. */
export function oauthQueryVerified(secret: string, params: URLSearchParams): boolean {
  const given = params.get('hmac');
  if (!given || !/^[0-9a-f]{64}$/i.test(given)) return false;
  return safeEqual(Buffer.from(given.toLowerCase(), 'hex'), Buffer.from(signOAuthQuery(secret, params), 'hex'));
}

/** X-Shopify-Hmac-Sha256 of a webhook body: base64 HMAC-SHA256 with the client secret. */
export function signWebhookBody(secret: string, raw: Uint8Array | string): string {
  return createHmac('sha256', secret).update(raw).digest('base64');
}

export function webhookBodyVerified(secret: string, raw: Uint8Array, header: string | undefined): boolean {
  if (!header) return false;
  const given = Buffer.from(header.trim(), 'base64');
  const want = createHmac('sha256', secret).update(raw).digest();
  return safeEqual(given, want);
}
