import {
  METER_DESCRIPTIONS,
  USAGE_METERS,
  callerLimits,
  meterCap,
  periodBounds,
  usageFor,
  usagePeriod,
} from '../usage/meters.ts';
import { grantRateKey, peekRate, RATE_WINDOW_MS, shopRateKey, windowStart } from '../usage/rate-limit.ts';
import type { OperationContext } from '../core/types.ts';
import { type EventKind, isoReq } from './shared.ts';
import { readEventCounts } from '../store/tables/events/counts.ts';
import type { Db } from '../store/db.ts';

/** What `events` says: how the shop's events of the period add up, and which the meter bills. */
export const EVENT_COUNTS_DESCRIPTION =
  'Events stored this period (by id, which is time-sortable), by kind: total = accepted + duplicates_suppressed + replays + test_events. `accepted` is what the `accepted_events` meter bills (sender events intake accepted and queued); a suppressed duplicate is stored as an event (`duplicate_suppressed`, linked to the first) and not billed; replays count in the `replays` meter; test events are not billed.';

/** The shop's events of a period, by kind: the counts kept at insert (event_counts, ADR 0312), at most four rows. */
async function eventCounts(db: Db, shopId: string, period: string) {
  const rows = await readEventCounts(db, shopId, period);
  const n = (kind: EventKind) => rows.find((r) => r.kind === kind)?.count ?? 0;
  const counts = {
    accepted: n('sender'),
    duplicates_suppressed: n('duplicate'),
    replays: n('replay'),
    test_events: n('test'),
  };
  return {
    total: counts.accepted + counts.duplicates_suppressed + counts.replays + counts.test_events,
    ...counts,
    description: EVENT_COUNTS_DESCRIPTION,
  };
}

/** The shop's plan, meters this period and rate-limit windows (getPlanUsage). */
export async function readPlanUsage({ ctx }: { ctx: OperationContext }) {
  const p = ctx.principal;
  const { db } = ctx.services;
  const now = ctx.services.now();
  // Independent reads, at once (on PostgreSQL each is a round trip; ADR 0602).
  const [limits, used, events, grantUsed, shopUsed] = await Promise.all([
    callerLimits(db, p),
    usageFor(db, p.shopId, now),
    eventCounts(db, p.shopId, usagePeriod(now)),
    peekRate(db, grantRateKey(p.grantId), now),
    peekRate(db, shopRateKey(p.shopId), now),
  ]);
  const bounds = periodBounds(now);
  const meters = USAGE_METERS.map((meter) => {
    const limit = meterCap(limits, meter);
    const u = used[meter];
    const withGrace = meterCap(limits, meter, true);
    const state =
      u >= withGrace
        ? 'limit_reached'
        : u >= limit
          ? withGrace > limit
            ? 'in_grace'
            : 'limit_reached'
          : u >= limit * 0.8
            ? 'near_limit'
            : 'ok';
    return {
      meter,
      description: METER_DESCRIPTIONS[meter],
      used: u,
      limit,
      remaining: Math.max(0, limit - u),
      state,
    } as const;
  });
  const eventCap = meterCap(limits, 'accepted_events');
  return {
    shop_id: p.shopId,
    plan: {
      id: limits.plan.id,
      name: limits.plan.name,
      price_usd_monthly: limits.plan.priceUsdMonthly,
      custom_limits: limits.overridden,
    },
    period: { id: usagePeriod(now), starts_at: isoReq(bounds.start), resets_at: isoReq(bounds.end) },
    meters,
    events,
    grace: {
      applies_to: 'accepted_events' as const,
      allowance: limits.graceEvents,
      in_grace: used.accepted_events > eventCap && used.accepted_events <= eventCap + limits.graceEvents,
      used: Math.max(0, used.accepted_events - eventCap),
      note:
        limits.graceEvents > 0
          ? 'Past the event cap, intake keeps accepting up to the grace allowance; nothing is charged silently. Beyond it, senders get 429 + Retry-After and nothing is lost.'
          : 'This plan has no grace: past the event cap, senders get 429 + Retry-After and nothing is lost.',
    },
    rate_limits: {
      window_s: RATE_WINDOW_MS / 1000,
      per_grant_per_minute: limits.ratePerMinute.perGrant,
      per_shop_per_minute: limits.ratePerMinute.perShop,
      this_grant_used: grantUsed,
      this_shop_used: shopUsed,
      window_resets_at: isoReq(windowStart(now) + RATE_WINDOW_MS),
    },
    retention: { body_retention_days: limits.bodyRetentionDays, dedupe_window_hours: limits.dedupeWindowHours },
  };
}
