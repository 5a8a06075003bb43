// `app/uninstalled`: Shopify says the merchant removed the app; the token is already invalid.
// Verified like every Shopify webhook (X-Shopify-Hmac-Sha256 over the raw body); the shop is the
// one the signed payload (the Shop resource) names, and must match X-Shopify-Shop-Domain when sent;
// deduped on X-Shopify-Webhook-Id per shop (ADR 1210), then in one audited transaction: the shop is marked `uninstalled`, its
// token deleted, its waiting events held (support code FP-H-UNIN, action reinstall_app), and every
// grant and merchant session of the shop revoked. A reinstall (oauth.ts) restores it (ADR 1200).
import { Hono } from 'hono';
import { appendAudit, type AuditActor } from '../audit/log.ts';
import { AppError } from '../errors/problem.ts';
import { SUPPORT_CODES } from '../handoff/outcomes.ts';
import type { AppEnv } from '../http/types.ts';
import { SenderGoneError } from '../intake/intake.ts';
import { readBodyCapped } from '../http/intake-routes.ts';
import { revokeShopSessions } from './merchant/session.ts';
import type { Services } from '../core/types.ts';
import { SHOPIFY_APP_PATHS, shopifyAppCredentials, webhookBodyVerified } from '../lib/shopify-app.ts';
import { assertTopicFits, boundShop, firstDelivery, webhookIdOf, webhookPayload } from './webhook-binding.ts';

export const APP_UNINSTALLED_TOPIC = 'app/uninstalled';
export const UNINSTALL_ACTOR: AuditActor = { kind: 'system', name: 'Shopify (app/uninstalled webhook)' };
const MAX_WEBHOOK_BYTES = 256 * 1024;

export interface UninstallResult {
  duplicate: boolean;
  shopId: string | null;
  heldEvents: number;
  revokedGrants: number;
  revokedSessions: number;
}

/** Applies one verified app/uninstalled delivery (idempotent per shop and webhook id). */
export async function applyUninstall(
  services: Services,
  input: { webhookId: string; shopDomain: string; requestId: string | null },
): Promise<UninstallResult> {
  const now = services.now();
  return services.db.tx(async (tx) => {
    const first = await firstDelivery(
      tx,
      { shopDomain: input.shopDomain, topic: APP_UNINSTALLED_TOPIC, webhookId: input.webhookId },
      now,
    );
    const none = { shopId: null, heldEvents: 0, revokedGrants: 0, revokedSessions: 0 };
    if (!first) return { duplicate: true, ...none };
    const shop = await tx.get<{ id: string; connection_status: string }>(
      'SELECT id, connection_status FROM shops WHERE domain = ?',
      [input.shopDomain],
    );
    if (!shop) return { duplicate: false, ...none };
    await tx.run(
      `UPDATE shops SET connection_status = 'uninstalled', access_token_enc = NULL, access_token_expires_at = NULL,
         refresh_token_enc = NULL, refresh_token_expires_at = NULL, uninstalled_at = ?, next_probe_at = NULL,
         probe_event_id = NULL, updated_at = ? WHERE id = ?`,
      [now, now, shop.id],
    );
    const code = SUPPORT_CODES.uninstalled;
    // Waiting and already-held events take the uninstall's code; one being delivered now is held
    // by the worker when Shopify refuses the deleted token, or when it is next claimed.
    const held = await tx.run(
      `UPDATE events SET state = 'held', support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
        WHERE shop_id = ? AND state IN ('accepted', 'queued', 'held')`,
      [code.code, code.errorCode, now, shop.id],
    );
    const grants = await tx.run('UPDATE grants SET revoked_at = ? WHERE shop_id = ? AND revoked_at IS NULL', [
      now,
      shop.id,
    ]);
    const sessions = await revokeShopSessions(tx, shop.id, now);
    await appendAudit(tx, {
      shopId: shop.id,
      actor: UNINSTALL_ACTOR,
      action: 'shop.uninstall',
      targetType: 'shop',
      targetId: shop.id,
      outcome: 'success',
      requestId: input.requestId,
      at: now,
      details: {
        webhook_id: input.webhookId,
        previous_status: shop.connection_status,
        access_token_deleted: true,
        held_events: held.changes,
        revoked_grants: grants.changes,
        revoked_sessions: sessions,
      },
    });
    return {
      duplicate: false,
      shopId: shop.id,
      heldEvents: held.changes,
      revokedGrants: grants.changes,
      revokedSessions: sessions,
    };
  });
}

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
