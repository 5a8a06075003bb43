// Caps an intent counts against, through the usage module's meters: every
// execution counts `execution`; replays and diagnostics shares also count their
// own monthly cap. Both are checked at preview (so the preview can say so) and consumed
// atomically inside the confirmation transaction.
import { AppError } from '../errors/problem.ts';
import { consumeUsage, limitsForShop, meterCap, periodBounds, usageFor, usagePeriod } from '../usage/meters.ts';
import type { Db } from '../store/db.ts';
import type { CapUse } from './types.ts';

export type CapMeter = CapUse['meter'];

const CAP_CODE = { replays: 'replay_limit_reached', diagnostics_shares: 'diagnostics_share_limit_reached' } as const;
const LABEL = { replays: 'replays', diagnostics_shares: 'diagnostics shares', execution: 'executions' } as const;

function refusal(
  meter: CapMeter | 'execution',
  use: { used: number; limit: number },
  planName: string,
  now: number,
): AppError {
  const extra = {
    meter,
    used: use.used,
    limit: use.limit,
    period: usagePeriod(now),
    resets_at: new Date(periodBounds(now).end).toISOString(),
  };
  const detail = `The ${planName} plan allows ${use.limit} ${LABEL[meter]} per month; ${use.used} are used in ${usagePeriod(now)}. The counter resets at ${extra.resets_at}.`;
  if (meter === 'execution')
    return new AppError('plan_limit_reached', {
      detail,
      reason: `Monthly execution cap (${use.limit}) reached.`,
      extra,
    });
  return new AppError(CAP_CODE[meter], {
    detail,
    reason: `Monthly ${LABEL[meter]} cap (${use.limit}) reached.`,
    extra,
  });
}

export async function capUse(
  db: Db,
  shopId: string,
  meter: CapMeter,
  now: number,
): Promise<CapUse & { planName: string }> {
  const limits = await limitsForShop(db, shopId);
  const used = (await usageFor(db, shopId, now))[meter];
  return { meter, used, limit: meterCap(limits, meter), planName: limits.plan.name };
}

/** Throws the cap's usage refusal when one more use would exceed the plan. */
export async function assertCapAvailable(db: Db, shopId: string, meter: CapMeter, now: number): Promise<CapUse> {
  const use = await capUse(db, shopId, meter, now);
  if (use.used >= use.limit) throw refusal(meter, use, use.planName, now);
  return { meter, used: use.used, limit: use.limit };
}

/**
 * Throws the usage refusal when the plan's monthly execution cap is used up, so a
 * preview is refused up front rather than at its confirmation.
 */
export async function assertExecutionAvailable(db: Db, shopId: string, now: number): Promise<void> {
  const limits = await limitsForShop(db, shopId);
  const limit = meterCap(limits, 'execution');
  const used = (await usageFor(db, shopId, now)).execution;
  if (used >= limit) throw refusal('execution', { used, limit }, limits.plan.name, now);
}

/** Counts one execution (and its own cap, if any) or throws the usage refusal; atomic, never overshoots. */
export async function consumeExecution(db: Db, shopId: string, cap: CapMeter | null, now: number): Promise<void> {
  const limits = await limitsForShop(db, shopId);
  for (const meter of cap ? (['execution', cap] as const) : (['execution'] as const)) {
    const limit = meterCap(limits, meter);
    if (!(await consumeUsage(db, shopId, meter, limit, now))) {
      const used = (await usageFor(db, shopId, now))[meter];
      throw refusal(meter, { used, limit }, limits.plan.name, now);
    }
  }
}
