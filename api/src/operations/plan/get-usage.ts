// GET /agent/v1/plan-usage — the shop's plan, this month's meters against their
// caps, the grace state for accepted events, rate limits and retention.
import { z } from '@hono/zod-openapi';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { USAGE_METERS } from '../../usage/meters.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { readPlanUsage } from '../../reads/plan-usage.ts';

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
    name: 'get_plan_usage',
    title: 'Read plan limits and usage',
    description:
      'See how much of the monthly plan is used (events, replays, reads, previews, executions), the rate limits, and when counters reset. Use it after a 402 or 429 refusal.',
  },
  cli: ['get-plan-usage'],
  run: async ({ ctx }) => readPlanUsage({ ctx }),
});
