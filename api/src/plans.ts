// The plan table, defined once. Docs (the plan table page), metering, rate
// limits, retention and dedupe windows all read from here.

export const PLAN_IDS = ['free', 'starter', 'growth', 'scale'] as const;
export type PlanId = (typeof PLAN_IDS)[number];

export interface Plan {
  id: PlanId;
  name: string;
  priceUsdMonthly: number;
  monthly: {
    acceptedEvents: number;
    replays: number;
    diagnosticsShares: number;
    simpleReads: number;
    richReads: number;
    previews: number;
    executions: number;
  };
  /** Extra accepted events allowed past the cap before intake answers 429 (paid plans only). */
  graceEvents: number;
  bodyRetentionDays: number;
  dedupeWindowHours: number;
  ratePerMinute: { perGrant: number; perShop: number };
}

export const PLANS: Record<PlanId, Plan> = {
  free: {
    id: 'free',
    name: 'Free',
    priceUsdMonthly: 0,
    monthly: {
      acceptedEvents: 1_000,
      replays: 50,
      diagnosticsShares: 5,
      simpleReads: 5_000,
      richReads: 1_000,
      previews: 200,
      executions: 100,
    },
    graceEvents: 0,
    bodyRetentionDays: 3,
    dedupeWindowHours: 24,
    ratePerMinute: { perGrant: 60, perShop: 120 },
  },
  starter: {
    id: 'starter',
    name: 'Starter',
    priceUsdMonthly: 19,
    monthly: {
      acceptedEvents: 25_000,
      replays: 1_000,
      diagnosticsShares: 50,
      simpleReads: 50_000,
      richReads: 10_000,
      previews: 2_000,
      executions: 1_000,
    },
    graceEvents: 2_500,
    bodyRetentionDays: 7,
    dedupeWindowHours: 24,
    ratePerMinute: { perGrant: 120, perShop: 300 },
  },
  growth: {
    id: 'growth',
    name: 'Growth',
    priceUsdMonthly: 79,
    monthly: {
      acceptedEvents: 250_000,
      replays: 10_000,
      diagnosticsShares: 200,
      simpleReads: 500_000,
      richReads: 100_000,
      previews: 20_000,
      executions: 10_000,
    },
    graceEvents: 25_000,
    bodyRetentionDays: 30,
    dedupeWindowHours: 72,
    ratePerMinute: { perGrant: 300, perShop: 1_000 },
  },
  scale: {
    id: 'scale',
    name: 'Scale',
    priceUsdMonthly: 299,
    monthly: {
      acceptedEvents: 2_000_000,
      replays: 100_000,
      diagnosticsShares: 1_000,
      simpleReads: 5_000_000,
      richReads: 1_000_000,
      previews: 200_000,
      executions: 100_000,
    },
    graceEvents: 200_000,
    bodyRetentionDays: 90,
    dedupeWindowHours: 168,
    ratePerMinute: { perGrant: 600, perShop: 3_000 },
  },
};

export function planOf(id: string): Plan {
  return PLANS[(PLAN_IDS as readonly string[]).includes(id) ? (id as PlanId) : 'free'];
}

// The usage period (billing month) every monthly meter and plan usage's event counts are kept by.

let lastPeriod = { start: 0, end: -1, id: '' };

/** Usage period of a moment: `YYYY-MM` in UTC (the latest one is cached: intake asks per request). */
export function usagePeriod(now: number): string {
  if (now >= lastPeriod.start && now < lastPeriod.end) return lastPeriod.id;
  lastPeriod = { ...periodBounds(now), id: new Date(now).toISOString().slice(0, 7) };
  return lastPeriod.id;
}

/** The period's first moment and the next period's first moment (UTC months). */
export function periodBounds(now: number): { start: number; end: number } {
  const d = new Date(now);
  return {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}
