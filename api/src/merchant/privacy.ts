// Shopify's privacy requests (customers/data_request, customers/redact, shop/redact), the domain
// side: which events a request is about, the bodies it erases (as retention does), and the audit
// entry (ids and counts only, never the customer data). A webhook id is handled once per shop and
// topic (ADR 1210). The surface (shopify/compliance.ts) verifies and parses the webhook.
import { appendAudit } from '../audit/log.ts';
import type { Services } from '../core/types.ts';
import { ERASED_RETENTION_STATE } from '../handoff/lifecycle.ts';
import { SUPPORT_CODES } from '../handoff/outcomes.ts';
import type { Db } from '../store/db.ts';
import { eraseEventBodies, pageEventBodies, stopUndeliveredEvents } from '../store/tables/events/merchant.ts';
import { disconnectRedactedShop, findShopIdByLowerDomain } from '../store/tables/shops.ts';
import { type CustomerMatcher, type CustomerRef, customerMatcher } from './customer-match.ts';
import { firstDelivery, PRIVACY_ACTOR } from './shopify-app.ts';

export const COMPLIANCE_TOPICS = ['customers/data_request', 'customers/redact', 'shop/redact'] as const;
export type ComplianceTopic = (typeof COMPLIANCE_TOPICS)[number];

/** The audit action each topic records. */
export const COMPLIANCE_AUDIT_ACTIONS: Record<ComplianceTopic, string> = {
  'customers/data_request': 'shopify.customers_data_request',
  'customers/redact': 'shopify.customers_redact',
  'shop/redact': 'shopify.shop_redact',
};

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

/** Events read per page while matching a customer (bodies are parsed in process). */
const MATCH_PAGE = 200;

/**
 * The ids of the shop's events that still hold a body and that the matcher names: the shop's
 * events are read page by page in id order and each body is parsed here (ADR 1211). Runs before
 * the request's transaction, so a long scan never holds the store's write lock.
 */
async function matchingEventIds(db: Db, shopId: string, matcher: CustomerMatcher): Promise<string[]> {
  if (matcher.empty) return [];
  const ids: string[] = [];
  let after = '';
  for (;;) {
    const page = await pageEventBodies(db, shopId, after, MATCH_PAGE);
    for (const row of page) if (matcher.matches(row)) ids.push(row.id);
    const last = page.at(-1);
    if (page.length < MATCH_PAGE || !last) return ids;
    after = last.id;
  }
}

/**
 * Events waiting for delivery (queued or held) whose body is about to be erased end as failed
 * with FP-H-ERAS: without their body Flow would start workflows on nothing. An event a worker
 * is delivering right now already holds its body; that call finishes.
 */
function stopUndelivered(tx: Db, now: number, shopId: string, ids?: readonly string[]) {
  return stopUndeliveredEvents(tx, { shopId, ...(ids ? { ids } : {}), code: SUPPORT_CODES.erased, at: now });
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
  const known = topic === 'shop/redact' ? undefined : await findShopIdByLowerDomain(services.db, domain);
  const matched = known ? await matchingEventIds(services.db, known.id, customerMatcher(payload.customer, orders)) : [];
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
    // Matched before the transaction (a shop re-created in between has other event ids: none match).
    const ids = shop.id === known?.id ? matched : [];
    if (topic === 'customers/redact') {
      await stopUndelivered(tx, now, shop.id, ids);
      const purged = await eraseEventBodies(tx, {
        shopId: shop.id,
        ids,
        retentionState: ERASED_RETENTION_STATE,
        at: now,
      });
      await audit(tx, shop.id, { shop_known: true, ...customerCounts, events_purged: purged.changes });
      return { shop_known: true, events: purged.changes };
    }
    const n = ids.length;
    await audit(tx, shop.id, {
      shop_known: true,
      ...customerCounts,
      data_request_id: payload.data_request?.id ?? null,
      events_matching: n,
    });
    return { shop_known: true, events: n };
  });
}
