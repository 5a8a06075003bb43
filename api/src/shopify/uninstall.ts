// `app/uninstalled`: Shopify says the merchant removed the app; the token is already invalid.
// Verified like every Shopify webhook (X-Shopify-Hmac-Sha256 over the raw body); the shop is the
// one the signed payload (the Shop resource) names, and must match X-Shopify-Shop-Domain when sent;
// deduped on X-Shopify-Webhook-Id per shop (ADR 1210), then applied by applyUninstall
// (merchant/shopify-app.ts): the shop marked `uninstalled`, its token deleted, its waiting events
// held, every grant and merchant session of it revoked. A reinstall (oauth.ts) restores it (ADR 1200).
import { Hono } from 'hono';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from '../http/types.ts';
import { SenderGoneError } from '../intake/intake.ts';
import { readBodyCapped } from '../http/intake-routes.ts';
import type { Services } from '../core/types.ts';
import { APP_UNINSTALLED_TOPIC, applyUninstall } from '../merchant/shopify-app.ts';
import { SHOPIFY_APP_PATHS, shopifyAppCredentials, webhookBodyVerified } from '../lib/shopify-app.ts';
import { assertTopicFits, boundShop, webhookIdOf, webhookPayload } from './webhook-binding.ts';

const MAX_WEBHOOK_BYTES = 256 * 1024;

export function uninstallRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post(SHOPIFY_APP_PATHS.appUninstalledWebhook, async (c) => {
    const services = getServices();
    let raw: Uint8Array;
    try {
      raw = await readBodyCapped(c.req.raw, MAX_WEBHOOK_BYTES);
    } catch (err) {
      if (err instanceof SenderGoneError) return c.body(null, 400);
      throw err;
    }
    const creds = shopifyAppCredentials(services.config);
    if (!creds || !webhookBodyVerified(creds.clientSecret, raw, c.req.header('x-shopify-hmac-sha256')))
      throw new AppError('shopify_webhook_unverified', {
        detail: creds
          ? 'X-Shopify-Hmac-Sha256 is missing or does not match the HMAC-SHA256 of the body.'
          : 'No Shopify client secret is configured, so app/uninstalled cannot be verified.',
      });
    const topic = c.req.header('x-shopify-topic');
    if (topic !== APP_UNINSTALLED_TOPIC)
      throw new AppError('shopify_webhook_topic_unknown', {
        detail: `This URL takes ${APP_UNINSTALLED_TOPIC} only, got ${JSON.stringify(topic ?? null)}.`,
      });
    // The payload is the Shop resource: the store is the one it names (signed), not the header's.
    const payload = webhookPayload(raw, APP_UNINSTALLED_TOPIC);
    assertTopicFits(APP_UNINSTALLED_TOPIC, payload);
    const shopDomain = boundShop(
      payload.myshopify_domain ?? payload.domain,
      c.req.header('x-shopify-shop-domain'),
      APP_UNINSTALLED_TOPIC,
    );
    const webhookId = webhookIdOf((name) => c.req.header(name));
    if (!webhookId)
      throw new AppError('invalid_request', {
        detail: 'app/uninstalled needs an X-Shopify-Webhook-Id header (at most 200 characters).',
      });
    const r = await applyUninstall(services, { webhookId, shopDomain, requestId: c.get('requestId') });
    return c.json({ ok: true, duplicate: r.duplicate });
  });
  return app;
}
