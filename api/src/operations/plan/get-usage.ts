// GET /agent/v1/plan-usage — the shop's plan, this month's meters against their
// caps, the grace state for accepted events, rate limits and retention.
import { z } from '@hono/zod-openapi';
import { USAGE_METERS } from '../../usage/meters.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { readPlanUsage } from '../../reads/plan-usage.ts';

const MeterUsage = z
  .object({
    meter: z.enum(USAGE_METERS).describe('Meter name (what is counted).'),
    description: z.string().describe('What the meter counts, in one sentence.'),
    used: z.number().int().describe('Count used this period.'),
    limit: z.number().int().describe("The plan's cap for this period."),
    remaining: z.number().int().describe('`limit` minus `used`, never below 0.'),
    state: z.enum(['ok', 'near_limit', 'in_grace', 'limit_reached']).describe('`near_limit` from 80 % of the cap.'),
  })
  .openapi('MeterUsage');

export const PlanUsage = z
  .object({
    shop_id: z.string().describe('Id of the shop.'),
    plan: z
      .object({
        id: z.string().describe('Plan id (e.g. `free`).'),
        name: z.string().describe('Plan name as shown to the merchant.'),
        price_usd_monthly: z.number().describe('Monthly price in US dollars (0 for free).'),
        custom_limits: z
          .boolean()
          .describe('True when the shop has limits set by support instead of the plan defaults.'),
      })
      .describe("The shop's plan."),
    period: z
      .object({
        id: z
          .string()
          .openapi({ example: '2026-11', description: 'Billing period as `YYYY-MM` (calendar month, UTC).' }),
        starts_at: Timestamp.describe('Start of the period (ISO 8601, UTC).'),
        resets_at: Timestamp.describe('When the meters reset to zero (start of the next period).'),
      })
      .describe('The billing period the meters count.'),
    events: z
      .object({
        total: z.number().int().describe('Events stored this period (the shop has this many events of the period).'),
        accepted: z
          .number()
          .int()
          .describe('Sender events intake accepted and queued: what the `accepted_events` meter bills.'),
        duplicates_suppressed: z
          .number()
          .int()
          .describe('Requests stored as suppressed duplicates (linked to the first event): a success, not billed.'),
        replays: z.number().int().describe('Replay events (counted by the `replays` meter).'),
        test_events: z.number().int().describe('Test events sent through a test-event intent (not billed).'),
        description: z.string().describe('How the numbers add up, in words.'),
      })
      .describe(
        "This period's events by kind, so they add up to the shop's event count: total = accepted + duplicates_suppressed + replays + test_events.",
      ),
    meters: z.array(MeterUsage).describe('Every meter with its use against the cap.'),
    grace: z
      .object({
        applies_to: z.literal('accepted_events').describe('The only meter with a grace allowance: accepted events.'),
        allowance: z
          .number()
          .int()
          .describe('Accepted events allowed past the cap (paid plans) before intake answers 429.'),
        in_grace: z
          .boolean()
          .describe('True when accepted events are past the cap and counting against the allowance.'),
        used: z.number().int().describe('Accepted events counted against the grace allowance this period.'),
        note: z.string().describe('What happens in grace and after it, in plain words.'),
      })
      .describe('Grace past the accepted-events cap, so a burst at month end is not dropped.'),
    rate_limits: z
      .object({
        window_s: z.number().int().describe('Length of the rate-limit window in seconds.'),
        per_grant_per_minute: z.number().int().describe('Calls one grant may make per window.'),
        per_shop_per_minute: z.number().int().describe('Calls all grants of the shop together may make per window.'),
        this_grant_used: z.number().int().describe('Calls this grant made in the current window.'),
        this_shop_used: z.number().int().describe("Calls the shop's grants made in the current window."),
        window_resets_at: Timestamp.describe('When the current window ends.'),
      })
      .describe('Agent API rate limits and current use.'),
    retention: z
      .object({
        body_retention_days: z
          .number()
          .int()
          .describe('Days an event body is kept before it is purged (metadata stays).'),
        dedupe_window_hours: z
          .number()
          .int()
          .describe('Default hours a repeated event id is suppressed as a duplicate.'),
      })
      .describe('How long data is kept under this plan.'),
  })
  .openapi('PlanUsage');

export const getPlanUsage = defineRead({
  name: 'get_plan_usage',
  path: '/plan-usage',
  summary: 'Read plan and usage',
  description:
    "The shop's plan, this month's usage of every meter against its cap, grace state, per-minute rate limits and retention. Counted as a simple read but never blocked by a plan cap, so you can always see why something was refused.",
  family: 'account',
  scope: 'plan:read',
  meter: 'simple_read',
  response: PlanUsage,
  mcp: {
    title: 'Read plan limits and usage',
    description:
      'See how much of the monthly plan is used (events, replays, reads, previews, executions), the rate limits, and when counters reset. Use it after a 402 or 429 refusal.',
  },
  run: async ({ ctx }) => readPlanUsage({ ctx }),
});
