import type { ErrorDef } from '../catalog.ts';

// Plan limits and rate limits (the `usage` layer).
export const USAGE_ERRORS = {
  rate_limited: {
    status: 429,
    title: 'Rate limit reached',
    layer: 'usage',
    retry: 'client',
    area: 'usage',
    description:
      'Too many requests in the current minute for this grant or this shop. The `Retry-After` header and `refusal.retry_after_s` say when to try again.',
    fix: 'Wait `Retry-After` seconds, then retry with exponential backoff and jitter. See `GET /agent/v1/plan-usage` for the limits.',
  },
  plan_limit_reached: {
    status: 402,
    title: 'Plan limit reached',
    layer: 'usage',
    retry: 'no',
    area: 'usage',
    description: "The shop's plan cap for this meter is used up for the current month. Nothing is charged silently.",
    fix: 'Check `GET /agent/v1/plan-usage`. Ask the merchant to upgrade the plan or wait for the next period.',
  },
} as const satisfies Record<string, ErrorDef>;
