// The sandbox playing Shopify's side of the app install (ADR 1200): the store's authorize page
// (Install / Decline), the token endpoint, `app/uninstalled` when the app is uninstalled there,
// and Flow's trigger lifecycle callback when a sandbox workflow is enabled or disabled. Everything
// it sends is signed as Shopify signs it, with the app's client secret.
import { createHash, randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import {
  ONLINE_TOKEN_TYPE,
  SHOPIFY_APP_PATHS,
  signOAuthQuery,
  signWebhookBody,
  TOKEN_EXCHANGE_GRANT,
} from '../lib/shopify-app.ts';
import { adminRoutes, refuseTokenExchange, SANDBOX_STAFF_ID } from './admin.ts';
import type { SandboxState } from './app.ts';

export interface SandboxShopifyApp {
  clientId: string;
  clientSecret: string;
  /** Flowport's public URL (redirect URIs must be under it). */
  appUrl: string;
  /** Where the stand-in reaches Flowport from this machine (webhooks, lifecycle callbacks). */
  flowportUrl: string;
}

export interface SandboxInstallState {
  codes: Map<string, { shop: string; clientId: string; perUser: boolean; expiresAt: number }>;
  /** SHA-256 of tokens Shopify no longer accepts (the app was uninstalled). */
  revokedTokens: Set<string>;
  /** Tokens issued per shop (hashes), to revoke them on uninstall. */
  issued: Map<string, Set<string>>;
  /** Sandbox workflows: per shop, trigger handle → enabled. */
  workflows: Map<string, Map<string, boolean>>;
  /** Issue expiring offline tokens (expires_in seconds, with a refresh token); null: non-expiring. */
  expiringTokenSeconds: number | null;
  /** Refresh tokens that still work (hash → shop); each works once. */
  refreshTokens: Map<string, string>;
  refreshes: number;
  /** Stores where the app was installed through Shopify-managed installation (the embedded admin). */
  managed: Set<string>;
}

export function createInstallState(): SandboxInstallState {
  return {
    codes: new Map(),
    revokedTokens: new Set(),
    issued: new Map(),
    workflows: new Map(),
    expiringTokenSeconds: null,
    refreshTokens: new Map(),
    refreshes: 0,
    managed: new Set(),
  };
}

export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

const SHOP_RE = /^[a-z0-9][a-z0-9-]{0,60}\.myshopify\.com$/;

/** A stable numeric shop id for a domain (Shopify's are numbers). */
export function sandboxShopNumericId(shop: string): number {
  return Number.parseInt(createHash('sha256').update(shop).digest('hex').slice(0, 12), 16);
}

function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function authorizePage(shop: string, q: URLSearchParams, scopes: string): string {
  const hidden = ['client_id', 'scope', 'redirect_uri', 'state']
    .map((k) => `<input type="hidden" name="${k}" value="${esc(q.get(k))}">`)
    .join('');
  const perUser = q.getAll('grant_options[]').includes('per-user')
    ? '<input type="hidden" name="per_user" value="1">'
    : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Install Flowport · ${esc(shop)} (sandbox Shopify)</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;background:#fff}
button{font:inherit;padding:.5rem 1.25rem;margin-right:.5rem;border-radius:.4rem;border:1px solid #1a1a1a;min-height:2.5rem}
.install{background:#005e46;color:#fff;border-color:#005e46}.muted{color:#4a4a4a}</style></head>
<body><main><p class="muted">Sandbox Shopify · ${esc(shop)}</p>
<h1>Install Flowport</h1>
<p>Flowport asks for access to <strong>${esc(shop)}</strong>${scopes ? `: <code>${esc(scopes)}</code>` : ' (no Admin API scopes; Flow triggers only)'}.</p>
<form method="post">${hidden}${perUser}
<button class="install" type="submit" name="decision" value="install">Install</button>
<button type="submit" name="decision" value="decline">Decline</button></form></main></body></html>`;
}

async function send(url: string, body: string, headers: Record<string, string>): Promise<number> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer().catch(() => undefined);
    return res.status;
  } catch {
    return 0;
  }
}

/** Sends a lifecycle callback as Flow does. Returns Flowport's HTTP status (0: unreachable). */
export function sendLifecycleCallback(
  app: SandboxShopifyApp,
  input: { shop: string; handle: string; name: string; enabled: boolean; timestamp?: string },
): Promise<number> {
  // Shopify's documented example identifies the trigger by its name ("Add row to spreadsheet").
  const body = JSON.stringify({
    flow_trigger_definition_id: input.name,
    has_enabled_flow: input.enabled,
    shop_id: sandboxShopNumericId(input.shop),
    shopify_domain: input.shop,
    timestamp: input.timestamp ?? new Date().toISOString(),
  });
  return send(`${app.flowportUrl}${SHOPIFY_APP_PATHS.flowLifecycle}`, body, {
    'x-shopify-hmac-sha256': signWebhookBody(app.clientSecret, body),
    'x-shopify-shop-domain': input.shop,
  });
}

export function installRoutes(
  app: Hono,
  state: SandboxState,
  install: SandboxInstallState,
  shopifyApp: () => SandboxShopifyApp | null,
): void {
  const need = () => {
    const a = shopifyApp();
    if (!a) throw new Error('The sandbox has no Shopify app credentials.');
    return a;
  };

  authorizeRoutes(app, install, need);
  adminRoutes(app, install, need);
  accessTokenRoute(app, install, need);
  storeActionRoutes(app, state, install, need);
}

/** Shopify's authorize page and its Install / Decline form, which redirects to the app with a code. */
function authorizeRoutes(app: Hono, install: SandboxInstallState, need: () => SandboxShopifyApp): void {
  app.get('/:shop/admin/oauth/authorize', (c) => {
    const shop = c.req.param('shop');
    const q = new URL(c.req.url).searchParams;
    const a = need();
    if (!SHOP_RE.test(shop)) return c.text('Unknown store.', 404);
    if (q.get('client_id') !== a.clientId)
      return c.text('Oauth error invalid_request: The client_id is not valid.', 400);
    const redirect = q.get('redirect_uri') ?? '';
    if (redirect !== `${a.appUrl.replace(/\/+$/, '')}${SHOPIFY_APP_PATHS.oauthCallback}`)
      return c.text('Oauth error invalid_request: The redirect_uri is not whitelisted.', 400);
    return c.html(authorizePage(shop, q, q.get('scope') ?? ''));
  });

  app.post('/:shop/admin/oauth/authorize', async (c) => {
    const shop = c.req.param('shop');
    const a = need();
    const form = (await c.req.parseBody()) as Record<string, string>;
    const redirect = form.redirect_uri ?? '';
    if (
      form.client_id !== a.clientId ||
      redirect !== `${a.appUrl.replace(/\/+$/, '')}${SHOPIFY_APP_PATHS.oauthCallback}`
    )
      return c.text('Oauth error invalid_request.', 400);
    const q = new URLSearchParams();
    if (form.decision === 'install') {
      const code = randomBytes(16).toString('hex');
      install.codes.set(code, {
        shop,
        clientId: a.clientId,
        perUser: form.per_user === '1',
        expiresAt: Date.now() + 60_000,
      });
      q.set('code', code);
    } else {
      q.set('error', 'access_denied');
      q.set('error_description', 'The merchant declined the installation.');
    }
    q.set(
      'host',
      Buffer.from(`admin.shopify.com/store/${shop.replace(/\.myshopify\.com$/, '')}`).toString('base64url'),
    );
    q.set('shop', shop);
    q.set('state', form.state ?? '');
    q.set('timestamp', String(Math.floor(Date.now() / 1000)));
    q.set('hmac', signOAuthQuery(a.clientSecret, q));
    return c.redirect(`${redirect}?${q.toString()}`, 302);
  });
}

/** An online (per-user) token for the sandbox store's one staff member, as Shopify answers it. */
function onlineToken(shop: string) {
  return {
    access_token: `shpua_sandbox_${randomBytes(16).toString('hex')}`,
    scope: '',
    expires_in: 86_399,
    associated_user_scope: '',
    associated_user: {
      id: Number(SANDBOX_STAFF_ID),
      first_name: 'Sandbox',
      last_name: 'Owner',
      email: `owner@${shop}`,
      account_owner: true,
      locale: 'en',
      collaborator: false,
      email_verified: true,
    },
  };
}

/** Shopify's token endpoint: an authorization code or a refresh token for an (expiring) offline or online token. */
function accessTokenRoute(app: Hono, install: SandboxInstallState, need: () => SandboxShopifyApp): void {
  app.post('/:shop/admin/oauth/access_token', async (c) => {
    const shop = c.req.param('shop');
    const a = need();
    const type = c.req.header('content-type') ?? '';
    const body = (type.includes('json') ? await c.req.json().catch(() => ({})) : await c.req.parseBody()) as Record<
      string,
      string
    >;
    const issue = () => {
      const token = `shpat_sandbox_${randomBytes(16).toString('hex')}`;
      const issued = install.issued.get(shop) ?? new Set<string>();
      issued.add(tokenHash(token));
      install.issued.set(shop, issued);
      if (install.expiringTokenSeconds === null) return { access_token: token, scope: '' };
      const refresh = `shprt_sandbox_${randomBytes(16).toString('hex')}`;
      install.refreshTokens.set(tokenHash(refresh), shop);
      return {
        access_token: token,
        scope: '',
        expires_in: install.expiringTokenSeconds,
        refresh_token: refresh,
        refresh_token_expires_in: 30 * 86_400,
      };
    };
    if (body.grant_type === TOKEN_EXCHANGE_GRANT) {
      if (body.client_id !== a.clientId || body.client_secret !== a.clientSecret)
        return c.json({ error: 'invalid_client', error_description: 'Client credentials are invalid' }, 401);
      const refused = await refuseTokenExchange(a, install, shop, body);
      if (refused) return c.json(refused, 400);
      return c.json(body.requested_token_type === ONLINE_TOKEN_TYPE ? onlineToken(shop) : issue());
    }
    if (body.grant_type === 'refresh_token') {
      if (body.client_id !== a.clientId || body.client_secret !== a.clientSecret)
        return c.json({ error: 'invalid_client', error_description: 'Client credentials are invalid' }, 401);
      const h = tokenHash(body.refresh_token ?? '');
      if (install.refreshTokens.get(h) !== shop)
        return c.json(
          { error: 'invalid_grant', error_description: 'The refresh token is invalid or was already used' },
          400,
        );
      install.refreshTokens.delete(h);
      install.refreshes += 1;
      return c.json(issue());
    }
    const code = install.codes.get(body.code ?? '');
    if (body.code) install.codes.delete(body.code);
    if (body.client_id !== a.clientId || body.client_secret !== a.clientSecret)
      return c.json({ error: 'invalid_client', error_description: 'Client credentials are invalid' }, 401);
    if (!code || code.shop !== shop || code.expiresAt < Date.now())
      return c.json(
        { error: 'invalid_request', error_description: 'The authorization code was not found or was already used' },
        400,
      );
    if (code.perUser) return c.json(onlineToken(shop));
    return c.json(issue());
  });
}

/** What a merchant does in a sandbox store: uninstall the app, enable or disable a workflow. */
function storeActionRoutes(
  app: Hono,
  state: SandboxState,
  install: SandboxInstallState,
  need: () => SandboxShopifyApp,
): void {
  // Sandbox API: uninstall the app from a sandbox store. Its tokens stop working and Flowport gets
  // a signed app/uninstalled webhook.
  app.post('/:shop/admin/apps/flowport/uninstall', async (c) => {
    const shop = c.req.param('shop');
    const a = need();
    for (const h of install.issued.get(shop) ?? []) install.revokedTokens.add(h);
    install.issued.delete(shop);
    for (const [h, s] of install.refreshTokens) if (s === shop) install.refreshTokens.delete(h);
    const body = JSON.stringify({
      id: sandboxShopNumericId(shop),
      name: shop.replace(/\.myshopify\.com$/, ''),
      domain: shop,
      myshopify_domain: shop,
    });
    const webhookId = `sandbox-${randomBytes(12).toString('hex')}`;
    const status = await send(`${a.flowportUrl}${SHOPIFY_APP_PATHS.appUninstalledWebhook}`, body, {
      'x-shopify-topic': 'app/uninstalled',
      'x-shopify-hmac-sha256': signWebhookBody(a.clientSecret, body),
      'x-shopify-shop-domain': shop,
      'x-shopify-webhook-id': webhookId,
      'x-shopify-triggered-at': new Date().toISOString(),
      'x-shopify-api-version': '2026-10',
    });
    return c.json({ shop, webhook_id: webhookId, flowport_status: status });
  });

  // Sandbox API: enable or disable a sandbox workflow that uses a trigger; Flow's lifecycle callback follows.
  app.get('/:shop/flow/workflows', (c) => {
    const shop = c.req.param('shop');
    return c.json({ shop, workflows: Object.fromEntries(install.workflows.get(shop) ?? []) });
  });
  app.post('/:shop/flow/workflows', async (c) => {
    const shop = c.req.param('shop');
    const a = need();
    const body = (await c.req.json().catch(() => null)) as {
      trigger?: unknown;
      enabled?: unknown;
      timestamp?: unknown;
    } | null;
    const handle = body?.trigger;
    if (!body || typeof handle !== 'string' || typeof body.enabled !== 'boolean')
      return c.json(
        { error: 'Body must be JSON: {"trigger": "<handle>", "enabled": true|false, "timestamp"?: "<ISO 8601>"}' },
        400,
      );
    if (!state.definitions.has(handle))
      return c.json({ error: `Unknown trigger ${handle}; known: ${[...state.definitions.keys()].join(', ')}` }, 400);
    if (
      body.timestamp !== undefined &&
      (typeof body.timestamp !== 'string' || Number.isNaN(Date.parse(body.timestamp)))
    )
      return c.json({ error: 'timestamp must be an ISO 8601 time' }, 400);
    const m = install.workflows.get(shop) ?? new Map<string, boolean>();
    m.set(handle, body.enabled);
    install.workflows.set(shop, m);
    const status = await sendLifecycleCallback(a, {
      shop,
      handle,
      name: state.definitions.get(handle)?.name ?? handle,
      enabled: body.enabled,
      ...(typeof body.timestamp === 'string' ? { timestamp: body.timestamp } : {}),
    });
    return c.json({ shop, trigger: handle, enabled: body.enabled, flowport_status: status });
  });
}
