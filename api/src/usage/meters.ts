// Metering: monthly usage counters per shop (`usage_counters`, period `YYYY-MM`, UTC)
// and the plan caps they are checked against. Intake records `accepted_events`,
// intents record `replays` / `diagnostics_shares`; the operation pipeline records
// each operation's declared meter. Limits come from the shop's plan, with
// optional per-shop overrides (`shops.limits_json`).
import type { Meter, Principal } from '../core/types.ts';
import { type Plan, periodBounds, planOf, usagePeriod } from '../plans.ts';
import type { Db } from '../store/db.ts';
import { findShopLimits, type ShopLimitsRow } from '../store/tables/shops.ts';
import { unflushedMeter } from './ledger.ts';
import { addUsage, consumeUsageBelowCap, readUsageCounts, refundUsageUnit } from '../store/tables/usage.ts';

export const USAGE_METERS = [
  'accepted_events',
  'replays',
  'diagnostics_shares',
  'simple_read',
  'rich_read',
  'preview',
  'execution',
] as const satisfies readonly (Meter | string)[];
export type UsageMeter = (typeof USAGE_METERS)[number];

/** Which monthly plan limit caps each meter. */
export const METER_PLAN_LIMIT: Record<UsageMeter, keyof Plan['monthly']> = {
  accepted_events: 'acceptedEvents',
  replays: 'replays',
  diagnostics_shares: 'diagnosticsShares',
  simple_read: 'simpleReads',
  rich_read: 'richReads',
  preview: 'previews',
  execution: 'executions',
};

export const METER_DESCRIPTIONS: Record<UsageMeter, string> = {
  accepted_events:
    'Sender events intake accepted and queued this month (billed); suppressed duplicates, replays and test events are not counted here (plan usage `events` adds them up).',
  replays: 'Event replays executed this month.',
  diagnostics_shares: 'Diagnostics shares created this month.',
  simple_read: 'Simple Agent Operations reads (grant, plan usage, setup, endpoint and single-object reads).',
  rich_read: 'Rich reads (event listings, event timelines, diagnostics, audit).',
  preview: 'Action intents previewed (created); a preview the operation refuses is not counted.',
  execution: 'Confirmed (executed) action intents.',
};

/**
 * Meters that count what an operation created, not calls: a call the operation itself refuses
 * (the event does not exist, the endpoint is not archived, …) is given back after it was
 * admitted. Reads count the call, answered or not.
 */
export const COUNTED_ON_SUCCESS: ReadonlySet<UsageMeter> = new Set<UsageMeter>(['preview']);

/** The usage period: defined with the plans (the store keys plan usage's event counts by it too). */
export { periodBounds, usagePeriod };

export interface ShopLimits {
  plan: Plan;
  /** Monthly caps after overrides. */
  monthly: Plan['monthly'];
  graceEvents: number;
  ratePerMinute: Plan['ratePerMinute'];
  bodyRetentionDays: number;
  dedupeWindowHours: number;
  overridden: boolean;
}

/** Shape of `shops.limits_json` (every field optional). */
export interface LimitOverrides {
  monthly?: Partial<Plan['monthly']>;
  graceEvents?: number;
  ratePerMinute?: Partial<Plan['ratePerMinute']>;
}

export function resolveLimits(planId: string, limitsJson: string | null | undefined): ShopLimits {
  const plan = planOf(planId);
  let o: LimitOverrides = {};
  if (limitsJson) {
    try {
      o = JSON.parse(limitsJson) as LimitOverrides;
    } catch {
      o = {};
    }
  }
  return {
    plan,
    monthly: { ...plan.monthly, ...(o.monthly ?? {}) },
    graceEvents: o.graceEvents ?? plan.graceEvents,
    ratePerMinute: { ...plan.ratePerMinute, ...(o.ratePerMinute ?? {}) },
    bodyRetentionDays: plan.bodyRetentionDays,
    dedupeWindowHours: plan.dedupeWindowHours,
    overridden: limitsJson != null && limitsJson !== '',
  };
}

/**
 * Sandbox shops keep their plan's caps but get the largest plan's per-minute
 * rates: local development and test suites burst far beyond a real agent.
 */
export const SANDBOX_RATE_PLAN = 'scale';

export async function limitsForShop(db: Db, shopId: string): Promise<ShopLimits> {
  return limitsOfShopRow(await findShopLimits(db, shopId));
}

/**
 * The calling shop's limits: from the shop row read with the grant when this request was
 * authenticated (one round trip fewer on PostgreSQL, ADR 0602), else from the store.
 */
export async function callerLimits(db: Db, principal: Principal): Promise<ShopLimits> {
  return principal.shopLimits ? limitsOfShopRow(principal.shopLimits) : limitsForShop(db, principal.shopId);
}

/** A shop's limits from its row (absent: the free plan's). */
export function limitsOfShopRow(row: ShopLimitsRow | undefined): ShopLimits {
  const limits = resolveLimits(row?.plan ?? 'free', row?.limits_json);
  if (row && Number(row.sandbox) === 1) {
    const o = row.limits_json ? (JSON.parse(row.limits_json) as LimitOverrides) : {};
    limits.ratePerMinute = { ...planOf(SANDBOX_RATE_PLAN).ratePerMinute, ...(o.ratePerMinute ?? {}) };
  }
  return limits;
}

/** The cap for a meter (accepted events include the grace allowance). */
export function meterCap(limits: ShopLimits, meter: UsageMeter, withGrace = false): number {
  const base = limits.monthly[METER_PLAN_LIMIT[meter]];
  return meter === 'accepted_events' && withGrace ? base + limits.graceEvents : base;
}

/** Adds `n` to a meter unconditionally (use inside the caller's transaction when given one). */
export async function recordUsage(
  db: Db,
  shopId: string,
  meter: UsageMeter,
  options: { n?: number; now?: number } = {},
): Promise<void> {
  await addUsage(db, shopId, usagePeriod(options.now ?? Date.now()), meter, options.n ?? 1);
}

/**
 * Adds 1 to a meter only while it is below `cap`; returns false (and changes
 * nothing) when the cap is reached. Atomic: concurrent callers never overshoot.
 */
export async function consumeUsage(
  db: Db,
  shopId: string,
  meter: UsageMeter,
  cap: number,
  now: number,
): Promise<boolean> {
  return consumeUsageBelowCap(db, shopId, usagePeriod(now), meter, cap);
}

/** Gives back one unit that consumeUsage took at `now` (its period, even if a new one began since). */
export async function refundUsage(db: Db, shopId: string, meter: UsageMeter, now: number): Promise<void> {
  await refundUsageUnit(db, shopId, usagePeriod(now), meter);
}

/**
 * Every meter's count for the period containing `now` (0 when unused), with what this process
 * counted and has not flushed (`root`: the process's store handle when `db` is a transaction's).
 */
export async function usageFor(
  db: Db,
  shopId: string,
  now: number = Date.now(),
  root: Db = db,
): Promise<Record<UsageMeter, number>> {
  const period = usagePeriod(now);
  const rows = await readUsageCounts(db, shopId, period);
  const out = Object.fromEntries(USAGE_METERS.map((m) => [m, unflushedMeter(root, shopId, period, m)])) as Record<
    UsageMeter,
    number
  >;
  for (const r of rows)
    if ((USAGE_METERS as readonly string[]).includes(r.meter)) out[r.meter as UsageMeter] += Number(r.count);
  return out;
}
