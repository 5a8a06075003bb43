// Shopify's privacy requests (customers/data_request, customers/redact, shop/redact), the domain
// side: which events a request is about, the bodies it erases (as retention does), and the audit
// entry (ids and counts only, never the customer data). A webhook id is handled once per shop and
// topic (ADR 1210). The surface (shopify/compliance.ts) verifies and parses the webhook.
import { appendAudit } from '../audit/log.ts';
import type { Services } from '../core/types.ts';
import { ERASED_RETENTION_STATE } from '../handoff/lifecycle.ts';
import { SUPPORT_CODES } from '../handoff/outcomes.ts';
import type { Db } from '../store/db.ts';
import {
  countMatchingEvents,
  type CustomerEventMatch,
  eraseEventBodies,
  stopUndeliveredEvents,
} from '../store/tables/events.ts';
import { disconnectRedactedShop, findShopIdByLowerDomain } from '../store/tables/shops.ts';
import { firstDelivery, PRIVACY_ACTOR } from './shopify-app.ts';

export const COMPLIANCE_TOPICS = ['customers/data_request', 'customers/redact', 'shop/redact'] as const;
export type ComplianceTopic = (typeof COMPLIANCE_TOPICS)[number];

/** The audit action each topic records. */
export const COMPLIANCE_AUDIT_ACTIONS: Record<ComplianceTopic, string> = {
  'customers/data_request': 'shopify.customers_data_request',
  'customers/redact': 'shopify.customers_redact',
  'shop/redact': 'shopify.shop_redact',
};

interface CustomerRef {
  id?: number | string | null;
  email?: string | null;
  phone?: string | null;
}

export interface CompliancePayload {
  shop_id?: number | string;
  shop_domain?: string;
  customer?: CustomerRef | null;
  orders_to_redact?: (number | string)[] | null;
  orders_requested?: (number | string)[] | null;
  data_request?: { id?: number | string } | null;
}

export interface ComplianceResult {
  /** Whether Flowport knows the shop (false: nothing to erase). */
  shop_known: boolean;
  /** Events whose body this request purged (redact topics) or that match (data request). */
  events: number;
  /** True when this X-Shopify-Webhook-Id was handled before (nothing done again). */
  duplicate?: boolean;
}

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
 * customer's email or phone as text (case-insensitive).
 */
export function customerMatch(
  customer: CustomerRef | null | undefined,
  orderIds: readonly (number | string)[],
): CustomerEventMatch {
  const ids = [...idForms('Customer', customer?.id), ...orderIds.flatMap((o) => idForms('Order', o))];
  const texts = [customer?.email, customer?.phone]
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  return { ids, bodyPatterns: texts.map(likeContains) };
}

/**
 * Events waiting for delivery (queued or held) whose body is about to be erased end as failed
 * with FP-H-ERAS: without their body Flow would start workflows on nothing. An event a worker
 * is delivering right now already holds its body; that call finishes.
 */
function stopUndelivered(tx: Db, now: number, shopId: string, match?: CustomerEventMatch) {
  return stopUndeliveredEvents(tx, { shopId, ...(match ? { match } : {}), code: SUPPORT_CODES.erased, at: now });
}

/** Applies one verified privacy webhook and records it in the audit log. */
export async function handleCompliance(
  services: Pick<Services, 'db' | 'now'>,
  topic: ComplianceTopic,
  payload: CompliancePayload,
  meta: { webhookId: string | null; requestId: string | null },
): Promise<ComplianceResult> {
  const domain = String(payload.shop_domain).trim().toLowerCase();
  const audit = (db: Db, shopId: string | null, details: Record<string, unknown>) =>
    appendAudit(db, {
      shopId,
      actor: PRIVACY_ACTOR,
      action: COMPLIANCE_AUDIT_ACTIONS[topic],
      targetType: 'shopify_webhook',
      targetId: meta.webhookId,
      outcome: 'success',
      requestId: meta.requestId,
      details: { topic, shopify_shop_id: payload.shop_id ?? null, ...details },
    });
  const now = services.now();
  const orderIds = (topic === 'customers/redact' ? payload.orders_to_redact : payload.orders_requested) ?? [];
  const orders = Array.isArray(orderIds) ? orderIds.filter((o) => typeof o === 'number' || typeof o === 'string') : [];
  const customerCounts = { customer_id: payload.customer?.id ?? null, orders: orders.length };
  return services.db.tx(async (tx): Promise<ComplianceResult> => {
    const shop = await findShopIdByLowerDomain(tx, domain);
    // A redelivery (or a concurrent twin) of this shop's webhook id changes nothing: the insert decides.
    if (meta.webhookId && !(await firstDelivery(tx, { shopDomain: domain, topic, webhookId: meta.webhookId }, now)))
      return { shop_known: shop !== undefined, events: 0, duplicate: true };
    if (!shop) {
      await audit(tx, null, { shop_known: false, events: 0 });
      return { shop_known: false, events: 0 };
    }
    if (topic === 'shop/redact') {
      await stopUndelivered(tx, now, shop.id);
      const purged = await eraseEventBodies(tx, { shopId: shop.id, retentionState: ERASED_RETENTION_STATE, at: now });
      await disconnectRedactedShop(tx, shop.id, now);
      await audit(tx, shop.id, { shop_known: true, events_purged: purged.changes, access_token_removed: true });
      return { shop_known: true, events: purged.changes };
    }
    const match = customerMatch(payload.customer, orders);
    if (topic === 'customers/redact') {
      await stopUndelivered(tx, now, shop.id, match);
      const purged = await eraseEventBodies(tx, {
        shopId: shop.id,
        match,
        retentionState: ERASED_RETENTION_STATE,
        at: now,
      });
      await audit(tx, shop.id, { shop_known: true, ...customerCounts, events_purged: purged.changes });
      return { shop_known: true, events: purged.changes };
    }
    const n = await countMatchingEvents(tx, shop.id, match);
    await audit(tx, shop.id, {
      shop_known: true,
      ...customerCounts,
      data_request_id: payload.data_request?.id ?? null,
      events_matching: n,
    });
    return { shop_known: true, events: n };
  });
}
