// Readiness checks shared by the setup and diagnostics reads: is the shop
// connected, are endpoints configured, do their Flow triggers exist, and what
// did the last 24 hours of traffic say. Each failing check links its docs page.
import { DOCS_PATHS, errorDocsPath, joinUrl } from '../docs-paths.ts';
import { AppError } from '../errors/problem.ts';
import { SHOP_HOLDS, shopHoldFor } from '../handoff/outcomes.ts';
import { handleForVariant } from '../handoff/triggers.ts';
import { describeReadiness, type FlowReadiness, flowReadinessByHandle } from '../handoff/flow-readiness.ts';
import type { Db } from '../store/db.ts';
import { rejectedIntakeCounts } from './receipts.ts';
import { limitsForShop, meterCap, usageFor } from '../usage/meters.ts';

/** What a check found, before its severity is derived from its status (checkSeverity). */
interface CheckFinding {
  check: string;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
  docs_url: string;
}

/**
 * How much a check that does not pass matters: `blocking` (it fails: events will not reach Flow,
 * or intake refuses them, until it is fixed; setup is not `ready`), `advisory` (it warns: events
 * still flow, it needs attention); null when it passes. The one derivation setup's checks and
 * `missing`, diagnostics and shares show.
 */
export type CheckSeverity = 'blocking' | 'advisory';
export function checkSeverity(status: CheckFinding['status']): CheckSeverity | null {
  return status === 'fail' ? 'blocking' : status === 'warn' ? 'advisory' : null;
}

export interface ReadinessCheck extends CheckFinding {
  severity: CheckSeverity | null;
}

export interface ShopReadRow {
  id: string;
  domain: string;
  plan: string;
  sandbox: number;
  connection_status: string;
  next_probe_at: number | string | null;
  has_token: number;
}

export const WINDOW_MS = 24 * 3_600_000;

export async function shopRow(db: Db, shopId: string): Promise<ShopReadRow | undefined> {
  return db.get<ShopReadRow>(
    `SELECT id, domain, plan, sandbox, connection_status, next_probe_at, CASE WHEN access_token_enc IS NULL THEN 0 ELSE 1 END AS has_token
       FROM shops WHERE id = ?`,
    [shopId],
  );
}

/** The calling shop's row, for a read about it; `not_found` when the shop is gone. */
export async function callerShopRow(db: Db, shopId: string): Promise<ShopReadRow> {
  const shop = await shopRow(db, shopId);
  if (!shop) throw new AppError('not_found');
  return shop;
}

export async function stateCounts(
  db: Db,
  shopId: string,
  since: number,
  endpointId?: string,
): Promise<Record<string, number>> {
  const rows = await db.all<{ state: string; n: number }>(
    `SELECT state, COUNT(*) AS n FROM events WHERE shop_id = ? AND received_at >= ?${endpointId ? ' AND endpoint_id = ?' : ''} GROUP BY state`,
    endpointId ? [shopId, since, endpointId] : [shopId, since],
  );
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
}

export async function readinessChecks(
  db: Db,
  shopId: string,
  publicUrl: string,
  now: number,
  endpointId?: string,
): Promise<ReadinessCheck[]> {
  const url = (p: string) => joinUrl(publicUrl, p);
  const shop = await shopRow(db, shopId);
  const checks: CheckFinding[] = [];
  shopChecks(checks, shop, url);
  await endpointChecks(checks, db, shop, shopId, url, endpointId);
  await trafficChecks(checks, db, shopId, url, now, endpointId);
  await planCheck(checks, db, shopId, url, now);
  return checks.map((c) => ({ ...c, severity: checkSeverity(c.status) }));
}

type Shop = Awaited<ReturnType<typeof shopRow>>;
type DocsUrl = (path: string) => string;

/** shop_connected, shopify_token. */
function shopChecks(checks: CheckFinding[], shop: Shop, url: DocsUrl): void {
  const status = shop?.connection_status ?? 'connected';
  const hold = shopHoldFor(status);
  checks.push({
    check: 'shop_connected',
    status: hold ? 'fail' : 'pass',
    detail: hold
      ? `${hold.why}. ${hold.release}`
      : `${shop?.domain ?? 'The shop'} is connected${shop && Number(shop.sandbox) === 1 ? ' (sandbox)' : ''}.`,
    docs_url: url(errorDocsPath(hold ? hold.errorCode : SHOP_HOLDS.disconnected.errorCode)),
  });
  checks.push({
    check: 'shopify_token',
    status: shop && Number(shop.has_token) === 1 ? 'pass' : 'fail',
    detail:
      shop && Number(shop.has_token) === 1
        ? 'An Admin API access token is stored (encrypted).'
        : 'No Admin API access token is stored for this shop.',
    docs_url: url(DOCS_PATHS.quickstart),
  });
}

/** endpoints_configured, flow_trigger_handles, and flow_workflow_enabled per trigger handle in use. */
async function endpointChecks(
  checks: CheckFinding[],
  db: Db,
  shop: Shop,
  shopId: string,
  url: DocsUrl,
  endpointId?: string,
): Promise<void> {
  const eps = await db.all<{ id: string; status: string; trigger_variant: string }>(
    `SELECT id, status, trigger_variant FROM endpoints WHERE shop_id = ? AND deleted_at IS NULL${endpointId ? ' AND id = ?' : ''}`,
    endpointId ? [shopId, endpointId] : [shopId],
  );
  const active = eps.filter((e) => e.status === 'active');
  checks.push({
    check: 'endpoints_configured',
    status: active.length > 0 ? 'pass' : 'fail',
    detail:
      active.length > 0
        ? `${active.length} active endpoint(s).`
        : eps.length > 0
          ? 'Endpoints exist but none is active (paused or archived): senders are refused.'
          : 'No endpoint yet: create one so a sender has somewhere to post.',
    docs_url: url(DOCS_PATHS.setUpEndpoints),
  });
  const handles = [...new Set(active.map((e) => handleForVariant(e.trigger_variant as never)))];
  checks.push({
    check: 'flow_trigger_handles',
    status: handles.length > 0 ? 'pass' : 'warn',
    detail:
      handles.length > 0
        ? `Active endpoints use Flow trigger handle(s): ${handles.join(', ')}. Deploy these trigger extensions and turn on a workflow for each.`
        : 'No active endpoint, so no Flow trigger is in use.',
    docs_url: url(DOCS_PATHS.flowTrigger),
  });
  // Flow's trigger lifecycle: does an enabled workflow use each trigger in use (yes / no / unknown, since when).
  const signals = shop ? await flowReadinessByHandle(db, shop.domain) : new Map<string, FlowReadiness>();
  for (const handle of handles) {
    const r = signals.get(handle) ?? { enabled: 'unknown', since: null };
    checks.push({
      check: `flow_workflow_enabled:${handle}`,
      status: r.enabled === 'yes' ? 'pass' : r.enabled === 'no' ? 'fail' : 'warn',
      detail: describeReadiness(handle, r),
      docs_url: url(`${DOCS_PATHS.lifecycle}#flow-readiness`),
    });
  }
}

/** recent_deliveries, sender_rejections (the last 24 hours). */
async function trafficChecks(
  checks: CheckFinding[],
  db: Db,
  shopId: string,
  url: DocsUrl,
  now: number,
  endpointId?: string,
): Promise<void> {
  const c = await stateCounts(db, shopId, now - WINDOW_MS, endpointId);
  const total = Object.values(c).reduce((a, b) => a + b, 0);
  const noWorkflow = c.no_workflow ?? 0;
  const failed = c.failed ?? 0;
  // Refused intake requests are receipts (and tallies), not events: count those.
  const refusedByCode = await rejectedIntakeCounts(db, shopId, now - WINDOW_MS, endpointId);
  const rejected = Object.values(refusedByCode).reduce((a, b) => a + b, 0);
  const byCode = Object.entries(refusedByCode)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  const delivered = c.delivered ?? 0;
  checks.push({
    check: 'recent_deliveries',
    status: noWorkflow > 0 ? 'fail' : failed > 0 ? 'warn' : total === 0 ? 'warn' : 'pass',
    detail:
      noWorkflow > 0
        ? `${noWorkflow} event(s) in 24 h reached Flow but no trigger or workflow matched (no_workflow). Deploy the trigger and enable a workflow.`
        : failed > 0
          ? `${failed} event(s) failed in 24 h (${delivered} delivered). Open one with GET /agent/v1/events?state=failed.`
          : total === 0
            ? 'No events in the last 24 hours: send a test event to prove the path end to end.'
            : `${delivered} of ${total} event(s) delivered in 24 h.`,
    docs_url: url(noWorkflow > 0 ? DOCS_PATHS.flowTrigger : total === 0 ? DOCS_PATHS.quickstart : DOCS_PATHS.lifecycle),
  });
  checks.push({
    check: 'sender_rejections',
    status: rejected > 0 ? 'warn' : 'pass',
    detail:
      rejected > 0
        ? `${rejected} request(s) refused at intake in 24 h (${byCode}). Open their receipts (recent_receipts) and the docs page of each code; for signature codes check the sender's signing secret and the endpoint's auth mode.`
        : 'No rejected requests in 24 h.',
    docs_url: url(DOCS_PATHS.authModes),
  });
}

/** plan_capacity. */
async function planCheck(checks: CheckFinding[], db: Db, shopId: string, url: DocsUrl, now: number): Promise<void> {
  const limits = await limitsForShop(db, shopId);
  const used = (await usageFor(db, shopId, now)).accepted_events;
  const cap = meterCap(limits, 'accepted_events');
  checks.push({
    check: 'plan_capacity',
    status: used >= cap ? 'fail' : used >= cap * 0.8 ? 'warn' : 'pass',
    detail: `${used} of ${cap} accepted events used this month on the ${limits.plan.name} plan.`,
    docs_url: url(DOCS_PATHS.usageLimits),
  });
}
