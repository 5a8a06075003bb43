// Shopify's mandatory privacy (compliance) webhooks: customers/data_request, customers/redact
// and shop/redact, all on one URL (the app configuration's `compliance_topics`). Each request
// is verified over its raw bytes with the app's client secret (constant time) before anything
// else; the shop is the payload's signed `shop_domain` (X-Shopify-Shop-Domain must agree), the
// topic header must fit the payload's shape, and a webhook id is handled once per shop and topic
// (ADR 1210); the effects purge retained bodies as retention does and are recorded in the audit log
// with ids and counts only, never the customer data itself.
import { Hono } from 'hono';
import { ENV } from '../config.ts';
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { appendAudit, type AuditActor } from '../audit/log.ts';
import { refuseControlCharacters } from '../lib/control-chars.ts';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from '../http/types.ts';
import { SenderGoneError } from '../intake/intake.ts';
import { readBodyCapped } from '../http/intake-routes.ts';
import type { HeaderReader } from '../intake/intake.ts';
import { PRESET_HMAC, verifyHmacSha256, verifySecret } from '../intake/verify.ts';
import { ERASED_RETENTION_STATE } from '../handoff/lifecycle.ts';
import { SUPPORT_CODES } from '../handoff/outcomes.ts';
import type { Services } from '../core/types.ts';
import type { SqlParam } from '../store/db.ts';
import { assertTopicFits, boundShop, firstDelivery, webhookIdOf, webhookPayload } from './webhook-binding.ts';

export { COMPLIANCE_WEBHOOK_PATH } from '../lib/package-info.ts';
export const COMPLIANCE_TOPICS = ['customers/data_request', 'customers/redact', 'shop/redact'] as const;
export type ComplianceTopic = (typeof COMPLIANCE_TOPICS)[number];

/** The audit action each topic records. */
export const COMPLIANCE_AUDIT_ACTIONS: Record<ComplianceTopic, string> = {
  'customers/data_request': 'shopify.customers_data_request',
  'customers/redact': 'shopify.customers_redact',
  'shop/redact': 'shopify.shop_redact',
};

export const SHOPIFY_ACTOR: AuditActor = { kind: 'system', name: 'Shopify (privacy webhook)' };

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

interface CustomerRef {
  id?: number | string | null;
  email?: string | null;
  phone?: string | null;
}

interface CompliancePayload {
  shop_id?: number | string;
  shop_domain?: string;
  customer?: CustomerRef | null;
  orders_to_redact?: (number | string)[] | null;
  orders_requested?: (number | string)[] | null;
  data_request?: { id?: number | string } | null;
}

type Db = Services['db'];

/** The numeric id and its Admin API GID, the two forms resource ids are stored in. */
function idForms(kind: 'Customer' | 'Order', id: number | string | null | undefined): string[] {
  if (id === null || id === undefined || id === '') return [];
  const s = String(id).trim();
  const numeric = s.replace(/^gid:\/\/shopify\/\w+\//, '');
  return [numeric, `gid://shopify/${kind}/${numeric}`];
}

function likeContains(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/**
 * The rule both customer topics use: the shop's events whose resource_id or related_resource_id
 * is the customer id or one of the order ids (numeric or GID), or whose body contains the
 * customer's email or phone as text (case-insensitive). Returns a SQL condition over `events`.
 */
export function customerMatch(
  customer: CustomerRef | null | undefined,
  orderIds: readonly (number | string)[],
): { sql: string; params: string[] } | null {
  const ids = [...idForms('Customer', customer?.id), ...orderIds.flatMap((o) => idForms('Order', o))];
  const texts = [customer?.email, customer?.phone]
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  const parts: string[] = [];
  const params: string[] = [];
  if (ids.length) {
    const list = ids.map(() => '?').join(', ');
    parts.push(`resource_id IN (${list})`, `related_resource_id IN (${list})`);
    params.push(...ids, ...ids);
  }
  for (const t of texts) {
    parts.push(`LOWER(body) LIKE ? ESCAPE '\\'`);
    params.push(likeContains(t));
  }
  return parts.length ? { sql: `(${parts.join(' OR ')})`, params } : null;
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

export interface ComplianceResult {
  /** Whether Flowport knows the shop (false: nothing to erase). */
  shop_known: boolean;
  /** Events whose body this request purged (redact topics) or that match (data request). */
  events: number;
  /** True when this X-Shopify-Webhook-Id was handled before (nothing done again). */
  duplicate?: boolean;
}

/** Applies one verified privacy webhook and records it in the audit log. */
/**
 * Events waiting for delivery (queued or held) whose body is about to be erased end as failed
 * with FP-H-ERAS: without their body Flow would start workflows on nothing. An event a worker
 * is delivering right now already holds its body; that call finishes.
 */
async function stopUndelivered(tx: Db, now: number, where: string, params: SqlParam[]): Promise<void> {
  const erased = SUPPORT_CODES.erased;
  await tx.run(
    `UPDATE events SET state = ?, support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
      WHERE ${where} AND body IS NOT NULL AND state IN ('queued', 'held')`,
    [erased.state, erased.code, erased.errorCode, now, ...params],
  );
}

export async function handleCompliance(
  services: Pick<Services, 'db' | 'now'>,
  topic: ComplianceTopic,
  payload: CompliancePayload,
  meta: { webhookId: string | null; requestId: string | null },
): Promise<ComplianceResult> {
  const domain = String(payload.shop_domain).trim().toLowerCase();
  const action = COMPLIANCE_AUDIT_ACTIONS[topic];
  const audit = (db: Db, shopId: string | null, details: Record<string, unknown>) =>
    appendAudit(db, {
      shopId,
      actor: SHOPIFY_ACTOR,
      action,
      targetType: 'shopify_webhook',
      targetId: meta.webhookId,
      outcome: 'success',
      requestId: meta.requestId,
      details: { topic, shopify_shop_id: payload.shop_id ?? null, ...details },
    });
  const now = services.now();
  const orderIds = (topic === 'customers/redact' ? payload.orders_to_redact : payload.orders_requested) ?? [];
  const orders = Array.isArray(orderIds) ? orderIds.filter((o) => typeof o === 'number' || typeof o === 'string') : [];
  const customerCounts = {
    customer_id: payload.customer?.id ?? null,
    orders: orders.length,
  };
  return services.db.tx(async (tx): Promise<ComplianceResult> => {
    const shop = await tx.get<{ id: string }>('SELECT id FROM shops WHERE LOWER(domain) = ?', [domain]);
    // A redelivery (or a concurrent twin) of this shop's webhook id changes nothing: the insert decides.
    if (meta.webhookId && !(await firstDelivery(tx, { shopDomain: domain, topic, webhookId: meta.webhookId }, now)))
      return { shop_known: shop !== undefined, events: 0, duplicate: true };
    if (!shop) {
      await audit(tx, null, { shop_known: false, events: 0 });
      return { shop_known: false, events: 0 };
    }
    if (topic === 'shop/redact') {
      await stopUndelivered(tx, now, 'shop_id = ?', [shop.id]);
      const purged = await tx.run(
        `UPDATE events SET body = NULL, retention_state = ?, updated_at = ? WHERE shop_id = ? AND body IS NOT NULL`,
        [ERASED_RETENTION_STATE, now, shop.id],
      );
      await tx.run(
        `UPDATE shops SET access_token_enc = NULL, connection_status = 'disconnected', updated_at = ? WHERE id = ?`,
        [now, shop.id],
      );
      await audit(tx, shop.id, { shop_known: true, events_purged: purged.changes, access_token_removed: true });
      return { shop_known: true, events: purged.changes };
    }
    const match = customerMatch(payload.customer, orders);
    if (topic === 'customers/redact') {
      if (match) await stopUndelivered(tx, now, `shop_id = ? AND ${match.sql}`, [shop.id, ...match.params]);
      const purged = match
        ? await tx.run(
            `UPDATE events SET body = NULL, retention_state = ?, updated_at = ? WHERE shop_id = ? AND body IS NOT NULL AND ${match.sql}`,
            [ERASED_RETENTION_STATE, now, shop.id, ...match.params],
          )
        : { changes: 0 };
      await audit(tx, shop.id, { shop_known: true, ...customerCounts, events_purged: purged.changes });
      return { shop_known: true, events: purged.changes };
    }
    const counted = match
      ? await tx.get<{ n: number | string }>(
          `SELECT COUNT(*) AS n FROM events WHERE shop_id = ? AND body IS NOT NULL AND ${match.sql}`,
          [shop.id, ...match.params],
        )
      : { n: 0 };
    const n = Number(counted?.n ?? 0);
    await audit(tx, shop.id, {
      shop_known: true,
      ...customerCounts,
      data_request_id: payload.data_request?.id ?? null,
      events_matching: n,
    });
    return { shop_known: true, events: n };
  });
}
