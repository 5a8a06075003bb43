// Readiness checks shared by the setup and diagnostics reads: is the shop
// connected, are endpoints configured, do their Flow triggers exist, and what
// did the last 24 hours of traffic say. Each failing check links its docs page.
import { DOCS_PATHS, errorDocsPath, joinUrl } from '../docs-paths.ts';
import { AppError } from '../errors/problem.ts';
import { SHOP_HOLDS, SUPPORT_CODES, shopHoldFor } from '../handoff/outcomes.ts';
import { handleForVariant } from '../handoff/triggers.ts';
import { describeReadiness, type FlowReadiness, flowReadinessByHandle } from '../handoff/flow-readiness.ts';
import type { Db } from '../store/db.ts';
import { type RefusalCounts, refusalCountsByEndpoint } from './receipts.ts';
import type { EventKind } from './shared.ts';
import { eventWindowSql, windowParams } from '../store/tables/events/window-counts.ts';
import { configFromSnake, type EndpointConfig, endpointWarnings, NO_DEDUPE_ID } from '../services/endpoints.ts';
import { limitsForShop, meterCap, type ShopLimits, usageFor } from '../usage/meters.ts';

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
    `SELECT state, SUM(n) AS n FROM (${eventWindowSql(endpointId !== undefined)}) AS w GROUP BY state HAVING SUM(n) > 0`,
    windowParams(shopId, since, endpointId),
  );
  return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
}

/**
 * What the caller already read in this request, so the checks do not read it again: the shop row
 * (undefined: the shop is gone), its limits, the window's refusals by endpoint (since
 * `now - WINDOW_MS`, for the same endpoint filter).
 */
export interface KnownFacts {
  shop?: ShopReadRow | undefined;
  limits?: ShopLimits;
  refusals?: Map<string, RefusalCounts>;
}

export async function readinessChecks(
  db: Db,
  shopId: string,
  publicUrl: string,
  now: number,
  endpointId?: string,
  known: KnownFacts = {},
): Promise<ReadinessCheck[]> {
  const url = (p: string) => joinUrl(publicUrl, p);
  const since = now - WINDOW_MS;
  // The checks' reads depend on nothing but the shop's domain: they run at once (on PostgreSQL each
  // is a round trip of its own on a pooled connection, ADR 0602).
  const shopRead = 'shop' in known ? Promise.resolve(known.shop) : shopRow(db, shopId);
  const [shop, shopEps, signals, outcomes, refusals, limits, used] = await Promise.all([
    shopRead,
    db.all<EndpointFacts>(
      'SELECT id, name, status, trigger_variant, auth_mode, config_json FROM endpoints WHERE shop_id = ? AND deleted_at IS NULL',
      [shopId],
    ),
    // Flow's trigger lifecycle: does an enabled workflow use each trigger (yes / no / unknown, since when).
    shopRead.then((s) => (s ? flowReadinessByHandle(db, s.domain) : new Map<string, FlowReadiness>())),
    senderEventOutcomes(db, shopId, since, endpointId),
    known.refusals ?? refusalCountsByEndpoint(db, shopId, since, endpointId),
    known.limits ?? limitsForShop(db, shopId),
    usageFor(db, shopId, now),
  ]);
  const checks: CheckFinding[] = [];
  shopChecks(checks, shop, url);
  const enabledTriggers = endpointChecks(checks, shopEps, signals, url, endpointId);
  checks.push(recentDeliveriesCheck(outcomes, enabledTriggers, url));
  checks.push(await senderRejectionsCheck(db, refusals, url));
  checks.push(planCheck(limits, used.accepted_events, url));
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

/**
 * endpoints_configured, flow_trigger_handles, and flow_workflow_enabled per trigger handle in use,
 * from the shop's endpoints and Flow's trigger lifecycle signals. Returns the trigger handles Flow
 * last said an enabled workflow uses.
 */
function endpointChecks(
  checks: CheckFinding[],
  shopEps: readonly EndpointFacts[],
  signals: ReadonlyMap<string, FlowReadiness>,
  url: DocsUrl,
  endpointId?: string,
): Set<string> {
  const eps = endpointId ? shopEps.filter((e) => e.id === endpointId) : shopEps;
  const active = eps.filter((e) => e.status === 'active');
  checks.push(endpointsConfigured(eps, shopEps, endpointId, url));
  checks.push(dedupeIdsCheck(active, url));
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
  for (const handle of handles) {
    const r = signals.get(handle) ?? { enabled: 'unknown', since: null };
    checks.push({
      check: `flow_workflow_enabled:${handle}`,
      status: r.enabled === 'yes' ? 'pass' : r.enabled === 'no' ? 'fail' : 'warn',
      detail: describeReadiness(handle, r),
      docs_url: url(`${DOCS_PATHS.lifecycle}#flow-readiness`),
    });
  }
  // The triggers Flow last said an enabled workflow uses (recent_deliveries' next step, per trigger).
  return new Set([...signals].filter(([, r]) => r.enabled === 'yes').map(([h]) => h));
}

interface EndpointFacts {
  id: string;
  name: string;
  status: string;
  trigger_variant: string;
  auth_mode: string;
  config_json: string;
}

/** dedupe_ids: the active endpoints with no sender id to dedupe on (endpoint reads warn the same). */
function dedupeIdsCheck(active: readonly EndpointFacts[], url: DocsUrl): CheckFinding {
  const none = active.filter(
    (e) => endpointWarnings(configFromSnake<EndpointConfig>(JSON.parse(e.config_json))).length > 0,
  );
  return {
    check: 'dedupe_ids',
    status: none.length > 0 ? 'warn' : 'pass',
    detail:
      none.length > 0
        ? `${none.map((e) => `${JSON.stringify(e.name)} (${e.id})`).join(', ')}: ${NO_DEDUPE_ID}`
        : active.length > 0
          ? 'Every active endpoint dedupes on a sender event id.'
          : 'No active endpoint.',
    docs_url: url(DOCS_PATHS.duplicates),
  };
}

/**
 * endpoints_configured: whether an active endpoint is there for senders. Filtered to one endpoint
 * (diagnostics), it says whether that one is active and how many the shop has, never the
 * filtered count as if it were the shop's.
 */
function endpointsConfigured(
  eps: readonly { status: string }[],
  shopEps: readonly { status: string }[],
  endpointId: string | undefined,
  url: DocsUrl,
): CheckFinding {
  const shopActive = shopEps.filter((e) => e.status === 'active').length;
  const ofShop = `the shop has ${shopActive} active endpoint${shopActive === 1 ? '' : 's'}`;
  const docs_url = url(DOCS_PATHS.setUpEndpoints);
  if (endpointId) {
    const status = eps[0]?.status;
    return status === 'active'
      ? { check: 'endpoints_configured', status: 'pass', detail: `This endpoint is active; ${ofShop}.`, docs_url }
      : {
          check: 'endpoints_configured',
          status: 'fail',
          detail: `This endpoint is ${status ?? 'gone'}: its senders are refused; ${ofShop}.`,
          docs_url,
        };
  }
  if (shopActive > 0)
    return { check: 'endpoints_configured', status: 'pass', detail: `${shopActive} active endpoint(s).`, docs_url };
  return {
    check: 'endpoints_configured',
    status: 'fail',
    detail:
      shopEps.length > 0
        ? 'Endpoints exist but none is active (paused or archived): senders are refused.'
        : 'No endpoint yet: create one so a sender has somewhere to post.',
    docs_url,
  };
}

/** How many refusing endpoints sender_rejections names (the most refused first). */
const NAMED_REFUSERS = 5;

/**
 * sender_rejections: requests refused at intake (receipts and tallies, not events), by code, and
 * which endpoints refused them with their counts, so an agent knows where to look first.
 */
async function senderRejectionsCheck(
  db: Db,
  byEndpoint: ReadonlyMap<string, RefusalCounts>,
  url: DocsUrl,
): Promise<CheckFinding> {
  const codes = (byCode: Record<string, number>) =>
    Object.entries(byCode)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
  const all: Record<string, number> = {};
  for (const r of byEndpoint.values())
    for (const [code, n] of Object.entries(r.by_error_code)) all[code] = (all[code] ?? 0) + n;
  const rejected = Object.values(all).reduce((a, b) => a + b, 0);
  if (rejected === 0)
    return {
      check: 'sender_rejections',
      status: 'pass',
      detail: 'No rejected requests in 24 h.',
      docs_url: url(DOCS_PATHS.authModes),
    };
  const ranked = [...byEndpoint].sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]));
  const named = ranked.slice(0, NAMED_REFUSERS);
  const names = new Map(
    (
      await db.all<{ id: string; name: string }>(
        `SELECT id, name FROM endpoints WHERE id IN (${named.map(() => '?').join(', ')})`,
        named.map(([id]) => id),
      )
    ).map((e) => [e.id, e.name]),
  );
  const which = named
    .map(([id, r]) => `${JSON.stringify(names.get(id) ?? id)} (${id}): ${r.total} (${codes(r.by_error_code)})`)
    .join('; ');
  const more = ranked.length > named.length ? `; and ${ranked.length - named.length} more endpoint(s)` : '';
  return {
    check: 'sender_rejections',
    status: 'warn',
    detail: `${rejected} request(s) refused at intake in 24 h (${codes(all)}), by endpoint: ${which}${more}. List them with listReceipts (result=refused, endpoint_id): each receipt's failure says which check failed and, when a well-known alternative matched, its failure.hint names what the sender does differently (read the hint before changing the secret or the auth mode).`,
    docs_url: url(DOCS_PATHS.authModes),
  };
}

/** How the sender events of a window ended (replays are counted with their original, as its recovery). */
export interface SenderEventOutcomes {
  total: number;
  delivered: number;
  /** Recovered by a replay (ADR 0420): a replay of the event reached Flow. */
  recovered: number;
  duplicates: number;
  /** Not recovered, ended no_workflow without a call to Shopify (Flow's lifecycle callback, FP-H-NOFL). */
  noWorkflowNotCalled: number;
  /** Not recovered, ended no_workflow on Flow's answer that the trigger handle is unknown (FP-H-NOWF). */
  noWorkflowUnknownHandle: number;
  failed: number;
  onTheWay: number;
  /** Test events of the window: not sender events, so in none of the counts above (plan usage's `test_events`). */
  testEvents: number;
  /** The trigger handles of the no_workflow events not recovered. */
  noWorkflowTriggers: Set<string>;
}

/**
 * The window's events that are not replays, by kind, state, support code, recovery and trigger:
 * from the window's hourly counts and edge (eventWindowSql, ADR 0313), each group joined to its
 * endpoint's trigger, so the join runs per group, not per event. Parameters: `windowParams`.
 */
export function senderOutcomesSql(byEndpoint: boolean): string {
  return `SELECT k.kind, k.state, k.support_code, k.recovered, ep.trigger_variant, SUM(k.n) AS n FROM (
       SELECT kind, state, support_code, recovered, endpoint_id, SUM(n) AS n FROM (${eventWindowSql(byEndpoint)}) AS e
        WHERE kind <> 'replay'
        GROUP BY kind, state, support_code, recovered, endpoint_id HAVING SUM(n) > 0) AS k
       JOIN endpoints ep ON ep.id = k.endpoint_id
      GROUP BY k.kind, k.state, k.support_code, k.recovered, ep.trigger_variant`;
}

/** The sender events (not replays, not test events) received since `since`, by how they ended; test events counted apart. */
export async function senderEventOutcomes(
  db: Db,
  shopId: string,
  since: number,
  endpointId?: string,
): Promise<SenderEventOutcomes> {
  // Grouped by EVENT_KIND_SQL, as plan usage counts events: replays are left out (counted with their original).
  const rows = await db.all<{
    kind: EventKind;
    state: string;
    support_code: string | null;
    recovered: number;
    n: number;
    trigger_variant: string;
  }>(senderOutcomesSql(endpointId !== undefined), windowParams(shopId, since, endpointId));
  const o: SenderEventOutcomes = {
    total: 0,
    delivered: 0,
    recovered: 0,
    duplicates: 0,
    noWorkflowNotCalled: 0,
    noWorkflowUnknownHandle: 0,
    failed: 0,
    onTheWay: 0,
    testEvents: 0,
    noWorkflowTriggers: new Set(),
  };
  for (const r of rows) {
    const n = Number(r.n);
    if (r.kind === 'test') {
      o.testEvents += n;
      continue;
    }
    o.total += n;
    if (r.state === 'delivered') o.delivered += n;
    else if (r.state === 'duplicate_suppressed') o.duplicates += n;
    else if (Number(r.recovered) === 1) o.recovered += n;
    else if (r.state === 'no_workflow' && r.support_code === SUPPORT_CODES.workflow_disabled.code)
      o.noWorkflowNotCalled += n;
    else if (r.state === 'no_workflow') o.noWorkflowUnknownHandle += n;
    else if (r.state === 'failed') o.failed += n;
    else o.onTheWay += n;
    if (r.state === 'no_workflow' && Number(r.recovered) === 0)
      o.noWorkflowTriggers.add(handleForVariant(r.trigger_variant as never));
  }
  return o;
}

/**
 * recent_deliveries from the window's sender events: a suppressed duplicate and an event recovered
 * by a replay are successes; a no_workflow event says whether Shopify was called (its support
 * code); the next step agrees with flow_workflow_enabled (`workflowsOn`: every trigger in use has
 * an enabled workflow, as Flow said).
 */
export function recentDeliveriesCheck(
  o: SenderEventOutcomes,
  enabledTriggers: ReadonlySet<string>,
  url: DocsUrl,
): CheckFinding {
  // Whether an enabled workflow now uses the trigger of every unrecovered no_workflow event (not every trigger in use).
  const triggers = [...o.noWorkflowTriggers].sort();
  const workflowsOn = triggers.every((h) => enabledTriggers.has(h));
  const noWorkflow = o.noWorkflowNotCalled + o.noWorkflowUnknownHandle;
  const ended = o.delivered + o.recovered + o.duplicates;
  const tests = o.testEvents
    ? ` ${o.testEvents} test event(s) in 24 h are not sender events and are not counted here (plan usage's test_events).`
    : '';
  const summary =
    (o.total === 0
      ? ''
      : `${ended} of ${o.total} sender event(s) in 24 h went through: ${o.delivered} delivered, ${o.recovered} recovered by a replay, ${o.duplicates} suppressed duplicate(s)${o.onTheWay ? `; ${o.onTheWay} still on the way` : ''}.`) +
    tests;
  if (noWorkflow > 0) {
    const how = [
      o.noWorkflowNotCalled
        ? `${o.noWorkflowNotCalled} without a call to Shopify (Flow's lifecycle callback said no enabled workflow used the trigger, ${SUPPORT_CODES.workflow_disabled.code})`
        : '',
      o.noWorkflowUnknownHandle
        ? `${o.noWorkflowUnknownHandle} on Flow's answer that the trigger handle is unknown (${SUPPORT_CODES.no_workflow.code})`
        : '',
    ]
      .filter(Boolean)
      .join(', ');
    const next = workflowsOn
      ? `An enabled workflow uses their trigger${triggers.length === 1 ? '' : 's'} (${triggers.join(', ')}) now, as flow_workflow_enabled says: nothing blocks new events; recover them with one bulk replay over the window (no_workflow_since, no_workflow_until), which leaves recovered events out; events?state=no_workflow&recovered=false lists what is left.`
      : `Deploy the trigger and turn on a workflow that uses it (${triggers.filter((h) => !enabledTriggers.has(h)).join(', ')}; see flow_workflow_enabled), then recover them with one bulk replay over the window (no_workflow_since).`;
    return {
      check: 'recent_deliveries',
      status: workflowsOn ? 'warn' : 'fail',
      detail:
        `${noWorkflow} sender event(s) in 24 h ended no_workflow and are not recovered: ${how}. ${next} ${summary}`.trim(),
      docs_url: url(workflowsOn ? DOCS_PATHS.bulkReplay : DOCS_PATHS.flowTrigger),
    };
  }
  if (o.failed > 0)
    return {
      check: 'recent_deliveries',
      status: 'warn',
      detail:
        `${o.failed} sender event(s) failed in 24 h and are not recovered. Open one with GET /agent/v1/events?state=failed&recovered=false. ${summary}`.trim(),
      docs_url: url(DOCS_PATHS.lifecycle),
    };
  if (o.total === 0)
    return {
      check: 'recent_deliveries',
      status: 'warn',
      detail: o.testEvents
        ? `No sender events in the last 24 hours.${tests} A test event proves the path to Flow, not the sender's side: send one real event from the sender.`
        : 'No events in the last 24 hours: send a test event to prove the path end to end.',
      docs_url: url(DOCS_PATHS.quickstart),
    };
  return { check: 'recent_deliveries', status: 'pass', detail: summary, docs_url: url(DOCS_PATHS.lifecycle) };
}

/** plan_capacity: the accepted events used this month against the plan's cap. */
function planCheck(limits: ShopLimits, used: number, url: DocsUrl): CheckFinding {
  const cap = meterCap(limits, 'accepted_events');
  return {
    check: 'plan_capacity',
    status: used >= cap ? 'fail' : used >= cap * 0.8 ? 'warn' : 'pass',
    detail: `${used} of ${cap} accepted events used this month on the ${limits.plan.name} plan.`,
    docs_url: url(DOCS_PATHS.usageLimits),
  };
}
