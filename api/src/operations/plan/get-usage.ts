// GET /agent/v1/plan-usage — the shop's plan, this month's meters against their
// caps, the grace state for accepted events, rate limits and retention.
import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors/problem.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import {
  METER_DESCRIPTIONS,
  USAGE_METERS,
  limitsForShop,
  meterCap,
  periodBounds,
  usageFor,
  usagePeriod,
} from '../../usage/meters.ts';
import { grantRateKey, peekRate, RATE_WINDOW_MS, shopRateKey, windowStart } from '../../usage/rate-limit.ts';
import { isoReq, Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';

const MeterUsage = z
  .object({
    meter: z.enum(USAGE_METERS),
    description: z.string(),
    used: z.number().int(),
    limit: z.number().int(),
    remaining: z.number().int(),
    state: z.enum(['ok', 'near_limit', 'in_grace', 'limit_reached']).describe('`near_limit` from 80 % of the cap.'),
  })
  .openapi('MeterUsage');

export const PlanUsage = z
  .object({
    shop_id: z.string(),
    plan: z.object({ id: z.string(), name: z.string(), price_usd_monthly: z.number(), custom_limits: z.boolean() }),
    period: z.object({ id: z.string().openapi({ example: '2026-11' }), starts_at: Timestamp, resets_at: Timestamp }),
    meters: z.array(MeterUsage),
    grace: z.object({
      applies_to: z.literal('accepted_events'),
      allowance: z
        .number()
        .int()
        .describe('Accepted events allowed past the cap (paid plans) before intake answers 429.'),
      in_grace: z.boolean(),
      used: z.number().int(),
      note: z.string(),
    }),
    rate_limits: z.object({
      window_s: z.number().int(),
      per_grant_per_minute: z.number().int(),
      per_shop_per_minute: z.number().int(),
      this_grant_used: z.number().int(),
      this_shop_used: z.number().int(),
      window_resets_at: Timestamp,
    }),
    retention: z.object({ body_retention_days: z.number().int(), dedupe_window_hours: z.number().int() }),
  })
  .openapi('PlanUsage');

export const getPlanUsage = defineOperation({
  operationId: 'getPlanUsage',
  method: 'get',
  path: `${AGENT_API_PREFIX}/plan-usage`,
  summary: 'Read plan and usage',
  description:
    "The shop's plan, this month's usage of every meter against its cap, grace state, per-minute rate limits and retention. Counted as a simple read but never blocked by a plan cap, so you can always see why something was refused.",
  family: 'account',
  kind: 'read',
  scope: 'plan:read',
  meter: 'simple_read',
  request: {},
  response: PlanUsage,
  errors: [],
  mcp: {
    name: 'read_plan_usage',
    title: 'Read plan limits and usage',
    description:
      'See how much of the monthly plan is used (events, replays, reads, previews, executions), the rate limits, and when counters reset. Use it after a 402 or 429 refusal.',
  },
  cli: ['plan-usage'],
  async run({ ctx }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const { db } = ctx.services;
    const now = ctx.services.now();
    const limits = await limitsForShop(db, p.shopId);
    const used = await usageFor(db, p.shopId, now);
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
        this_grant_used: await peekRate(db, grantRateKey(p.grantId), now),
        this_shop_used: await peekRate(db, shopRateKey(p.shopId), now),
        window_resets_at: isoReq(windowStart(now) + RATE_WINDOW_MS),
      },
      retention: { body_retention_days: limits.bodyRetentionDays, dedupe_window_hours: limits.dedupeWindowHours },
    };
  },
});
