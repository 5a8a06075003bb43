// Shopify's mandatory privacy (compliance) webhooks: customers/data_request, customers/redact
// and shop/redact, all on one URL (the app configuration's `compliance_topics`). Each request
// is verified over its raw bytes with the app's client secret (constant time) before anything
// else; the shop is the payload's signed `shop_domain` (X-Shopify-Shop-Domain must agree), the
// topic header must fit the payload's shape, and a webhook id is handled once per shop and topic
// (ADR 1210); the effects (merchant/privacy.ts) purge retained bodies as retention does and
// are recorded in the audit log with ids and counts only, never the customer data itself.
import { Hono } from 'hono';
import { ENV } from '../config.ts';
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { refuseControlCharacters } from '../lib/control-chars.ts';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from '../http/types.ts';
import { SenderGoneError } from '../intake/intake.ts';
import { readBodyCapped } from '../http/intake-routes.ts';
import type { HeaderReader } from '../intake/intake.ts';
import { PRESET_HMAC, verifyHmacSha256, verifySecret } from '../intake/verify.ts';
import type { Services } from '../core/types.ts';
import {
  COMPLIANCE_TOPICS,
  type CompliancePayload,
  type ComplianceTopic,
  handleCompliance,
} from '../merchant/privacy.ts';
import { assertTopicFits, boundShop, webhookIdOf, webhookPayload } from './webhook-binding.ts';

export { COMPLIANCE_WEBHOOK_PATH } from '../lib/package-info.ts';
/**
 * Shopify signs these webhooks as it signs any webhook: the `shopify` auth mode's check (base64
 * HMAC-SHA256 of the raw body, constant-time compare), keyed with the app's client secret.
 */
function assertSignedByShopify(secret: string, raw: Uint8Array, headers: HeaderReader): void {
  try {
    verifyHmacSha256(PRESET_HMAC.shopify, [verifySecret('shopify', secret)], { headers, raw, now: Date.now() });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    throw new AppError('shopify_webhook_unverified', {
      detail:
        err.code === 'signature_missing'
          ? 'The request has no X-Shopify-Hmac-Sha256 header.'
          : 'X-Shopify-Hmac-Sha256 does not match the HMAC-SHA256 of the body.',
    });
  }
}

export function complianceRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post('/', async (c) => {
    const services = getServices();
    let raw: Uint8Array;
    try {
      raw = await readBodyCapped(c.req.raw, services.config.intake.maxBodyBytes);
    } catch (err) {
      if (err instanceof SenderGoneError) return c.body(null, 400);
      throw err;
    }
    const secret = services.config.shopify.clientSecret;
    if (!secret) {
      throw new AppError('shopify_webhook_unverified', {
        detail: `No Shopify client secret is configured (${ENV.shopifyClientSecret}), so privacy webhooks cannot be verified. See ${joinUrl(services.config.publicUrl, DOCS_PATHS.privacyWebhooks)}.`,
      });
    }
    assertSignedByShopify(secret, raw, c.req.raw.headers);
    const topic = c.req.header('x-shopify-topic')?.trim().toLowerCase();
    if (!topic || !(COMPLIANCE_TOPICS as readonly string[]).includes(topic)) {
      throw new AppError('shopify_webhook_topic_unknown', {
        detail: `This URL answers ${COMPLIANCE_TOPICS.join(', ')}; X-Shopify-Topic was ${topic ? `\`${topic.slice(0, 100)}\`` : 'missing'}.`,
      });
    }
    const body = webhookPayload(raw, 'privacy webhook');
    if (typeof body.shop_domain !== 'string') {
      throw new AppError('invalid_json', {
        detail: 'The body is not a Shopify privacy webhook payload (no `shop_domain`).',
      });
    }
    // Matched against the store: a NUL would fail on PostgreSQL (issue 24); Shopify never sends one.
    refuseControlCharacters({
      shop_domain: body.shop_domain,
      orders_to_redact: body.orders_to_redact,
      orders_requested: body.orders_requested,
    });
    // The store and the action are the signed payload's, never the unsigned headers' alone.
    const shopDomain = boundShop(body.shop_domain, c.req.header('x-shopify-shop-domain'), topic);
    assertTopicFits(topic, body);
    const payload = { ...(body as CompliancePayload), shop_domain: shopDomain };
    const result = await handleCompliance(services, topic as ComplianceTopic, payload, {
      webhookId: webhookIdOf((name) => c.req.header(name)),
      requestId: c.get('requestId'),
    });
    return c.json({ received: true, topic, ...result }, 200);
  });
  app.all('/', () => {
    throw new AppError('method_not_allowed', { detail: 'Shopify privacy webhooks are POST only.', allow: ['POST'] });
  });
  return app;
}
