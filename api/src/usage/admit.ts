// Usage admission for one authenticated operation call: per-minute rate limits (grant, then shop)
// → 429 + Retry-After; the monthly plan cap of the operation's meter → 402; otherwise the meter is
// counted. A read (GET) counts in memory and writes nothing (usage ledger, ADR 0310); a writing
// call counts in one write of its own committed without waiting for the disk (one statement on
// PostgreSQL, ADR 0308), carrying what the process counted in memory. A meter that counts only
// what the operation creates (COUNTED_ON_SUCCESS: previews) comes back with a refund for a refusal.
import { appendAudit } from '../audit/log.ts';
import { recordGrantUse } from './grant-use.ts';
import { ledgerOf } from './ledger.ts';
import { AppError } from '../errors/problem.ts';
import type { Admission } from '../core/types.ts';
import type { AnyOperation, Principal, Services } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import { countOperationCall } from '../store/tables/usage.ts';
import {
  COUNTED_ON_SUCCESS,
  consumeUsage,
  callerLimits,
  meterCap,
  periodBounds,
  recordUsage,
  refundUsage,
  type ShopLimits,
  usageFor,
  usagePeriod,
} from './meters.ts';
import {
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
  /** A rate limit refused the call, for the first time in this window in this process (audited once). */
  firstRefusal: boolean;
}

interface AdmitArgs {
  /** The process's store handle (its usage ledger's). */
  root: Db;
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

/**
 * A read's counts, in memory (ADR 0310): the grant's use, its rate window, then the shop's, then
 * the read meter, each only if the one before let the call through. Nothing is written.
 */
async function countRead(db: Db, a: AdmitArgs): Promise<Counted> {
  const { principal, op, limits, now } = a;
  const ledger = ledgerOf(db);
  recordGrantUse(db, principal, now);
  const g = await ledger.rate(grantRateKey(principal.grantId), windowStart(now));
  const grant = ledger.hit(g);
  if (grant > limits.ratePerMinute.perGrant)
    return { grant, shop: null, consumed: null, firstRefusal: ledger.firstRefusal(g) };
  const s = await ledger.rate(shopRateKey(principal.shopId), windowStart(now));
  const shop = ledger.hit(s);
  if (shop > limits.ratePerMinute.perShop) return { grant, shop, consumed: null, firstRefusal: ledger.firstRefusal(s) };
  if (op.meter === null) return { grant, shop, consumed: null, firstRefusal: false };
  const m = await ledger.meter(principal.shopId, usagePeriod(now), op.meter, now);
  return { grant, shop, consumed: ledger.consume(m, capOf(a)), firstRefusal: false };
}

/**
 * A writing call's counts in the store, in its own write (it writes anyway), carrying what this
 * process counted in memory for the same windows so the store's count is exact for it: one
 * statement on PostgreSQL (countOperationCall), one transaction on SQLite.
 */
async function countWrite(db: Db, a: AdmitArgs): Promise<Counted> {
  const { principal, op, limits, now } = a;
  const ledger = ledgerOf(db);
  recordGrantUse(db, principal, now);
  const g = await ledger.rate(grantRateKey(principal.grantId), windowStart(now));
  const s = await ledger.rate(shopRateKey(principal.shopId), windowStart(now));
  const cg = ledger.carry(g);
  const cs = ledger.carry(s);
  const cap = capOf(a);
  let grant: number;
  let shop: number | null;
  let consumed: boolean | null = null;
  try {
    if (db.dialect === 'postgres') {
      const row = await countOperationCall(db, {
        grantN: 1 + cg.n,
        shopN: 1 + cs.n,
        grantRateKey: grantRateKey(principal.grantId),
        shopRateKey: shopRateKey(principal.shopId),
        windowStart: windowStart(now),
        perGrant: limits.ratePerMinute.perGrant,
        perShop: limits.ratePerMinute.perShop,
        shopId: principal.shopId,
        period: usagePeriod(now),
        meter: op.meter,
        cap: cap === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : cap,
      });
      grant = Number(row?.grant_count);
      shop = row?.shop_count == null ? null : Number(row.shop_count);
      const passed = grant <= limits.ratePerMinute.perGrant && shop !== null && shop <= limits.ratePerMinute.perShop;
      if (passed && op.meter !== null) consumed = row?.used != null;
    } else {
      ({ grant, shop, consumed } = await db.tx(
        async (tx) => {
          const gc = await hitRate(tx, grantRateKey(principal.grantId), now, 1 + cg.n);
          if (gc > limits.ratePerMinute.perGrant) return { grant: gc, shop: null, consumed: null };
          const sc = await hitRate(tx, shopRateKey(principal.shopId), now, 1 + cs.n);
          if (sc > limits.ratePerMinute.perShop || op.meter === null) return { grant: gc, shop: sc, consumed: null };
          if (cap === Number.POSITIVE_INFINITY) {
            await recordUsage(tx, principal.shopId, op.meter, { now });
            return { grant: gc, shop: sc, consumed: true };
          }
          return { grant: gc, shop: sc, consumed: await consumeUsage(tx, principal.shopId, op.meter, cap, now) };
        },
        { durability: 'lazy' },
      ));
    }
  } catch (err) {
    cg.settle(null);
    cs.settle(null);
    throw err;
  }
  cg.settle(grant);
  // The shop's window was not counted when the grant's limit refused the call: its carried requests go back.
  cs.settle(shop);
  const refusedBy =
    grant > limits.ratePerMinute.perGrant ? g : shop !== null && shop > limits.ratePerMinute.perShop ? s : null;
  return { grant, shop, consumed, firstRefusal: refusedBy !== null && ledger.firstRefusal(refusedBy) };
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
    if (counted.firstRefusal) {
      // Audit the first refusal of a window only (per process), so a flood cannot grow the log.
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
  const used = (await usageFor(tx, principal.shopId, now, a.root))[op.meter];
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
  const limits = await callerLimits(db, principal);
  const a: AdmitArgs = { root: db, principal, op, limits, now, requestId };
  // A read counts in memory and writes nothing; a writing call counts in its own lazy write (ADR
  // 0310). A refusal writes its audit entry (the first of its window) in a transaction of its own.
  const counted = op.method === 'get' ? await countRead(db, a) : await countWrite(db, a);
  const refused = counted.consumed === false || counted.shop === null || counted.shop > limits.ratePerMinute.perShop;
  // Only the window's first rate refusal and a plan-cap refusal write (their audit entry, the cap's
  // refusal window): a flood of refused reads past the first opens no transaction.
  const writes = counted.firstRefusal || counted.consumed === false;
  const refusal = !refused
    ? null
    : writes
      ? await db.tx((tx) => refusalFor(tx, a, counted), { durability: 'lazy' })
      : await refusalFor(db, a, counted);
  if (refusal) throw refusal;
  const meter = op.meter;
  if (meter === null || counted.consumed !== true || !COUNTED_ON_SUCCESS.has(meter)) return undefined;
  return { refund: () => refundUsage(db, principal.shopId, meter, now) };
}
