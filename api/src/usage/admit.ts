// Usage admission for one authenticated operation call: per-minute rate limits
// (grant, then shop) → 429 + Retry-After; the monthly plan cap of the
// operation's meter → 402; otherwise the meter is counted. All in one write
// transaction committed without waiting for the disk (one statement on PostgreSQL). A meter that counts only what the operation
// creates (COUNTED_ON_SUCCESS: previews) comes back with a refund for a refusal.
import { appendAudit } from '../audit/log.ts';
import { recordGrantUse, returnUse, takeDeferredUse } from './grant-use.ts';
import { AppError } from '../errors/problem.ts';
import type { Admission } from '../core/types.ts';
import type { AnyOperation, Principal, Services } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import { countOperationCall } from '../store/tables/usage.ts';
import {
  COUNTED_ON_SUCCESS,
  consumeUsage,
  limitsForShop,
  limitsOfShopRow,
  meterCap,
  periodBounds,
  recordUsage,
  refundUsage,
  type ShopLimits,
  usageFor,
  usagePeriod,
} from './meters.ts';
import {
  dropOldWindows,
  firstRefusalOfWindow,
  grantRateKey,
  hitRate,
  refusalAuditKey,
  retryAfterSeconds,
  shopRateKey,
  windowStart,
} from './rate-limit.ts';

/**
 * Operations that are counted but never blocked by a plan cap: an agent that
 * hit a cap must still be able to read why (plan usage) and what it may do (grant).
 */
export const CAP_EXEMPT_OPERATIONS: ReadonlySet<string> = new Set(['getPlanUsage', 'getGrant']);

/** What one call's admission counted: the rate windows' new counts and whether its meter took a unit. */
interface Counted {
  grant: number;
  /** Not counted when the grant's own limit refused the call first. */
  shop: number | null;
  /** Null: no meter to count, or the call was refused before it; false: the meter is at its cap. */
  consumed: boolean | null;
}

interface AdmitArgs {
  principal: Principal;
  op: AnyOperation;
  limits: ShopLimits;
  now: number;
  requestId: string | undefined;
}

/** The meter's cap for this call; Infinity when the operation is counted but never blocked. */
function capOf({ op, limits }: AdmitArgs): number {
  if (op.meter === null || CAP_EXEMPT_OPERATIONS.has(op.operationId)) return Number.POSITIVE_INFINITY;
  return meterCap(limits, op.meter);
}

/** The grant's use, its rate window, then the shop's, then the meter, each only if the one before let the call through. */
async function countCall(tx: Db, a: AdmitArgs): Promise<Counted> {
  const { principal, op, limits, now } = a;
  await recordGrantUse(tx, principal, now);
  const grant = await hitRate(tx, grantRateKey(principal.grantId), now);
  if (grant > limits.ratePerMinute.perGrant) return { grant, shop: null, consumed: null };
  const shop = await hitRate(tx, shopRateKey(principal.shopId), now);
  if (shop > limits.ratePerMinute.perShop || op.meter === null) return { grant, shop, consumed: null };
  const cap = capOf(a);
  if (cap === Number.POSITIVE_INFINITY) {
    await recordUsage(tx, principal.shopId, op.meter, { now });
    return { grant, shop, consumed: true };
  }
  return { grant, shop, consumed: await consumeUsage(tx, principal.shopId, op.meter, cap, now) };
}

/** countCall as one statement on PostgreSQL (countOperationCall): the conditions are countCall's. */
async function countCallPostgres(db: Db, a: AdmitArgs): Promise<Counted> {
  const { principal, op, limits, now } = a;
  const cap = capOf(a);
  const countGrantUse = takeDeferredUse(principal);
  const row = await countOperationCall(db, {
    now,
    grantId: principal.grantId,
    countGrantUse,
    grantRateKey: grantRateKey(principal.grantId),
    shopRateKey: shopRateKey(principal.shopId),
    windowStart: windowStart(now),
    perGrant: limits.ratePerMinute.perGrant,
    perShop: limits.ratePerMinute.perShop,
    shopId: principal.shopId,
    period: usagePeriod(now),
    meter: op.meter,
    cap: cap === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : cap,
  }).catch((err: unknown) => {
    returnUse(principal, countGrantUse);
    throw err;
  });
  const grant = Number(row?.grant_count);
  const shop = row?.shop_count == null ? null : Number(row.shop_count);
  // First count of a new window, as hitRate does.
  if (grant === 1) await dropOldWindows(db, grantRateKey(principal.grantId), now);
  if (shop === 1) await dropOldWindows(db, shopRateKey(principal.shopId), now);
  const passed = grant <= limits.ratePerMinute.perGrant && shop !== null && shop <= limits.ratePerMinute.perShop;
  return { grant, shop, consumed: passed && op.meter !== null ? row?.used != null : null };
}

/** The refusal owed for what was counted, if any, with its audit entry (the first of its window). */
async function refusalFor(tx: Db, a: AdmitArgs, counted: Counted): Promise<AppError | null> {
  const { principal, op, limits, now, requestId } = a;
  const actor = { grantId: principal.grantId, kind: principal.actor.kind, name: principal.actor.name };
  const auditRefusal = (details: Record<string, unknown>) =>
    appendAudit(tx, {
      shopId: principal.shopId,
      actor,
      action: op.operationId,
      outcome: 'refused',
      requestId: requestId ?? null,
      at: now,
      details,
    });
  const rates = [
    { count: counted.grant, limit: limits.ratePerMinute.perGrant, who: `grant ${principal.grantId}`, scope: 'grant' },
    { count: counted.shop, limit: limits.ratePerMinute.perShop, who: 'this shop (all grants together)', scope: 'shop' },
  ] as const;
  for (const r of rates) {
    if (r.count === null || r.count <= r.limit) continue;
    const retryAfterS = retryAfterSeconds(now);
    if (r.count === r.limit + 1) {
      // Audit the first refusal of a window only, so a flood cannot grow the log.
      await auditRefusal({ code: 'rate_limited', limit_scope: r.scope, limit_per_minute: r.limit });
    }
    return new AppError('rate_limited', {
      detail: `Rate limit reached: ${r.who} may make ${r.limit} requests per minute. Retry after ${retryAfterS} s.`,
      reason: `Per-${r.scope} limit of ${r.limit} requests per minute reached.`,
      retryAfterS,
      extra: { limit_scope: r.scope, limit_per_minute: r.limit },
    });
  }
  if (counted.consumed !== false || op.meter === null) return null;
  const cap = capOf(a);
  const used = (await usageFor(tx, principal.shopId, now))[op.meter];
  const resetsAt = new Date(periodBounds(now).end).toISOString();
  // Audited once per grant, meter and window like the other repeatable refusals; counted otherwise.
  const first = await firstRefusalOfWindow(tx, refusalAuditKey(principal.grantId, `cap:${op.meter}`), now);
  if (first) {
    await auditRefusal({
      code: 'plan_limit_reached',
      meter: op.meter,
      used,
      limit: cap,
      ...(first.previousWindow > 1 ? { refused_in_previous_window: first.previousWindow } : {}),
    });
  }
  return new AppError('plan_limit_reached', {
    detail: `The ${limits.plan.name} plan allows ${cap} ${op.meter.replace('_', ' ')}s per month and ${used} were used. The counter resets at ${resetsAt}.`,
    reason: `Monthly ${op.meter} cap of the ${limits.plan.name} plan reached.`,
    extra: { meter: op.meter, used, limit: cap, plan: limits.plan.id, resets_at: resetsAt },
  });
}

export async function admitUsage(
  principal: Principal,
  op: AnyOperation,
  services: Services,
  requestId?: string,
): Promise<Admission | undefined> {
  const { db } = services;
  const now = services.now();
  const limits = principal.shopLimits
    ? limitsOfShopRow(principal.shopLimits)
    : await limitsForShop(db, principal.shopId);
  const a: AdmitArgs = { principal, op, limits, now, requestId };
  // Counters, not promises: committed without waiting for the disk; a crash may lose the last few
  // milliseconds' counts, in the caller's favour. A side effect's own transaction is durable and,
  // the log being in order, makes these durable too (ADR 0308).
  let counted: Counted;
  let refusal: AppError | null;
  if (db.dialect === 'postgres') {
    counted = await countCallPostgres(db, a);
    const refused = counted.consumed === false || counted.shop === null || counted.shop > limits.ratePerMinute.perShop;
    refusal = refused ? await db.tx((tx) => refusalFor(tx, a, counted), { durability: 'lazy' }) : null;
  } else {
    ({ counted, refusal } = await db.tx(
      async (tx) => {
        const c = await countCall(tx, a);
        return { counted: c, refusal: await refusalFor(tx, a, c) };
      },
      { durability: 'lazy' },
    ));
  }
  if (refusal) throw refusal;
  const meter = op.meter;
  if (meter === null || counted.consumed !== true || !COUNTED_ON_SUCCESS.has(meter)) return undefined;
  return { refund: () => refundUsage(db, principal.shopId, meter, now) };
}
