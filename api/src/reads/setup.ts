// The shop's setup as getSetup reads it: connection, Flow triggers, endpoints and what is
// missing before events can flow.
import { handleForVariant } from '../handoff/triggers.ts';
import { TRIGGER_VARIANTS } from '../store/tables/endpoints.ts';
import { callerLimits } from '../usage/meters.ts';
import { callerShopRow, readinessChecks, WINDOW_MS } from './readiness.ts';
import { refusalCountsByEndpoint, refusedWindowOf } from './receipts.ts';
import type { OperationContext } from '../core/types.ts';
import { shopConnection } from './shared.ts';

/**
 * The shop's newest received_at and delivered_at, each one index entry: the partial indexes
 * events_shop_received and events_shop_delivered (migration 1760; MAX skips nulls, so the
 * filters change nothing but let the planner use them).
 */
export const LAST_EVENT_SQL = `SELECT (SELECT MAX(received_at) FROM events WHERE shop_id = ? AND received_at IS NOT NULL) AS received_at,
  (SELECT MAX(delivered_at) FROM events WHERE shop_id = ? AND delivered_at IS NOT NULL) AS delivered_at`;

/** The shop's setup: Flow connection, trigger variants in use, endpoints by status, readiness (getSetup). */
export async function readSetup({ ctx }: { ctx: OperationContext }) {
  const p = ctx.principal;
  const { db, config } = ctx.services;
  const now = ctx.services.now();
  const since = now - WINDOW_MS;
  // Every read here is independent of the others: they run at once, and the readiness checks take
  // the shop row, its limits and the window's refusals read here rather than reading them again
  // (on PostgreSQL each read is a round trip; ADR 0602).
  const shopRead = callerShopRow(db, p.shopId);
  const refusalsRead = refusalCountsByEndpoint(db, p.shopId, since);
  const [shop, eps, last, refusals, checks] = await Promise.all([
    shopRead,
    db.all<{ status: string; deleted_at: number | null; trigger_variant: string }>(
      'SELECT status, deleted_at, trigger_variant FROM endpoints WHERE shop_id = ?',
      [p.shopId],
    ),
    db.get<{ received_at: number | null; delivered_at: number | null }>(LAST_EVENT_SQL, [p.shopId, p.shopId]),
    refusalsRead,
    Promise.all([shopRead, refusalsRead, callerLimits(db, p)]).then(([s, refusals, limits]) =>
      readinessChecks(db, p.shopId, config.publicUrl, now, undefined, { shop: s, limits, refusals }),
    ),
  ]);
  const live = eps.filter((e) => !e.deleted_at);
  const refused = refusedWindowOf(refusals);
  const iso = (ms: number | null | undefined) =>
    ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
  return {
    shop: {
      id: shop.id,
      domain: shop.domain,
      plan: shop.plan,
      sandbox: Number(shop.sandbox) === 1,
      ...shopConnection(shop),
    },
    flow: {
      api_version: config.shopify.apiVersion,
      trigger_variants: TRIGGER_VARIANTS.map((v) => ({
        variant: v,
        handle: handleForVariant(v),
        used_by_endpoints: live.filter((e) => e.status === 'active' && e.trigger_variant === v).length,
      })),
    },
    endpoints: {
      total: live.length,
      active: live.filter((e) => e.status === 'active').length,
      paused: live.filter((e) => e.status === 'paused').length,
      archived: live.filter((e) => e.status === 'archived').length,
      deleted: eps.length - live.length,
    },
    refused_24h: refused,
    last_event_at: iso(last?.received_at),
    last_delivered_at: iso(last?.delivered_at),
    ready: checks.every((c) => c.status !== 'fail'),
    checks,
    // Blocking first (what stops events), then advisory; each keeps its check order.
    missing: checks
      .flatMap((c) => (c.severity === null ? [] : [{ ...c, severity: c.severity }]))
      .sort((a, b) => Number(a.severity === 'advisory') - Number(b.severity === 'advisory'))
      .map((c) => ({ item: c.check, severity: c.severity, detail: c.detail, docs_url: c.docs_url })),
  };
}
