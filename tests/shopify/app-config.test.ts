// shopify.app.toml and the lifecycle extension against what Flowport serves: every path the app
// configuration points Shopify at is a route here (answering as that route does, not 404), and the
// scopes, topics, API version and trigger extensions match the code's single sources.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SHOPIFY_API_VERSION, ENV, SHOPIFY_ACCESS_SCOPES } from '../../api/src/config.ts';
import {
  handleForVariant,
  loadTriggerDefinitions,
  parseToml,
  TRIGGER_EXTENSIONS_DIR,
} from '../../api/src/handoff/triggers.ts';
import { TRIGGER_VARIANTS } from '../../api/src/store/tables/endpoints.ts';
import { SHOPIFY_APP_PATHS } from '../../api/src/lib/shopify-app.ts';
import { COMPLIANCE_WEBHOOK_PATH } from '../../api/src/shopify/compliance.ts';
import { COMPLIANCE_TOPICS } from '../../api/src/merchant/privacy.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

const APP_TOML = fileURLToPath(new URL('../../shopify/shopify.app.toml', import.meta.url));
const LIFECYCLE_TOML = `${TRIGGER_EXTENSIONS_DIR}flow-trigger-lifecycle/shopify.extension.toml`;

interface AppToml {
  client_id: string;
  name: string;
  application_url: string;
  embedded: boolean;
  access_scopes: { scopes: string; use_legacy_install_flow?: boolean };
  auth: { redirect_urls: string[] };
  webhooks: { api_version: string; subscriptions: { topics?: string[]; compliance_topics?: string[]; uri: string }[] };
}

const app = parseToml(readFileSync(APP_TOML, 'utf8'), 'shopify.app.toml') as unknown as AppToml;
const lifecycle = (
  parseToml(readFileSync(LIFECYCLE_TOML, 'utf8'), 'lifecycle') as { extensions: Record<string, string>[] }
).extensions[0] as Record<string, string>;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

describe('shopify.app.toml', () => {
  it('declares the app: name, placeholders for configuration, scopes and API version from the code', () => {
    expect(app.name).toBe('Flowport');
    expect(app.client_id).toBe(`<${ENV.shopifyClientId}>`);
    expect(new URL(app.application_url).pathname).toBe(SHOPIFY_APP_PATHS.merchant);
    // Embedded in the admin, installed by Shopify (managed installation, token exchange: ADR 1450).
    expect(app.embedded).toBe(true);
    expect(app.access_scopes.use_legacy_install_flow).toBe(false);
    expect(app.access_scopes.scopes.split(',').filter(Boolean)).toEqual([...SHOPIFY_ACCESS_SCOPES]);
    expect(app.webhooks.api_version).toBe(DEFAULT_SHOPIFY_API_VERSION);
    expect(app.auth.redirect_urls.map((u) => new URL(u).pathname)).toEqual([SHOPIFY_APP_PATHS.oauthCallback]);
    expect(app.auth.redirect_urls.every((u) => new URL(u).origin === new URL(app.application_url).origin)).toBe(true);
  });

  it('subscribes to app/uninstalled and the compliance topics on the URLs Flowport serves', () => {
    const uninstalled = app.webhooks.subscriptions.find((s) => s.topics?.includes('app/uninstalled'));
    expect(uninstalled?.uri).toBe(SHOPIFY_APP_PATHS.appUninstalledWebhook);
    const compliance = app.webhooks.subscriptions.find((s) => s.compliance_topics);
    expect(compliance?.compliance_topics).toEqual([...COMPLIANCE_TOPICS]);
    expect(compliance?.uri).toBe(COMPLIANCE_WEBHOOK_PATH);
  });

  it('ships the four trigger extensions and the lifecycle callback extension with its URL', () => {
    expect(loadTriggerDefinitions().map((d) => d.handle)).toEqual(TRIGGER_VARIANTS.map(handleForVariant));
    expect(lifecycle.type).toBe('flow_trigger_lifecycle_callback');
    expect(lifecycle.url).toBe(SHOPIFY_APP_PATHS.flowLifecycle);
  });

  it('every path it names is served: webhooks refuse an unsigned request with 401, pages answer', async () => {
    for (const path of [SHOPIFY_APP_PATHS.appUninstalledWebhook, COMPLIANCE_WEBHOOK_PATH, lifecycle.url as string]) {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status, path).toBe(401);
      expect(((await res.json()) as { code: string }).code, path).toBe('shopify_webhook_unverified');
    }
    const merchant = await fetch(`${server.url}${new URL(app.application_url).pathname}`);
    expect(merchant.status).toBe(200);
    expect(await merchant.text()).toContain('Sign in to Flowport');
    const callback = await fetch(`${server.url}${SHOPIFY_APP_PATHS.oauthCallback}`, { redirect: 'manual' });
    expect(callback.status).toBe(400);
    expect(await callback.text()).toContain('shopify_oauth_hmac_invalid');
    const installPath = await fetch(`${server.url}${SHOPIFY_APP_PATHS.install}?shop=a.myshopify.com`, {
      redirect: 'manual',
    });
    expect(installPath.status).toBe(302);
  });
});
