// Usage admission for one authenticated operation call: per-minute rate limits
// (grant, then shop) → 429 + Retry-After; the monthly plan cap of the
// operation's meter → 402; otherwise the meter is counted. All in one write
// transaction (one fsync on SQLite). A meter that counts only what the operation
// creates (COUNTED_ON_SUCCESS: previews) comes back with a refund for a refusal.
import { appendAudit } from '../audit/log.ts';
import { recordGrantUse } from '../auth/grant-use.ts';
import { AppError } from '../errors/problem.ts';
import type { Admission } from '../core/types.ts';
import type { AnyOperation, Principal, Services } from '../core/types.ts';
import {
  COUNTED_ON_SUCCESS,
  consumeUsage,
  limitsForShop,
  meterCap,
  periodBounds,
  recordUsage,
  refundUsage,
  usageFor,
} from './meters.ts';
import {
  firstRefusalOfWindow,
  grantRateKey,
  hitRates,
  refusalAuditKey,
  retryAfterSeconds,
  shopRateKey,
  unhitRate,
} from './rate-limit.ts';

/**
 * Operations that are counted but never blocked by a plan cap: an agent that
 * hit a cap must still be able to read why (plan usage) and what it may do (grant).
 */
export const CAP_EXEMPT_OPERATIONS: ReadonlySet<string> = new Set(['getPlanUsage', 'getGrant']);

export async function admitUsage(
  principal: Principal,
  op: AnyOperation,
  services: Services,
  requestId?: string,
): Promise<Admission | undefined> {
  const now = services.now();
  const limits = principal.limits ?? (await limitsForShop(services.db, principal.shopId));
  let consumed: NonNullable<AnyOperation['meter']> | null = null;
  const refusal = await services.db.tx(
    async (tx): Promise<AppError | null> => {
      const rates = [
        {
          key: grantRateKey(principal.grantId),
          limit: limits.ratePerMinute.perGrant,
          who: `grant ${principal.grantId}`,
          scope: 'grant',
        },
        {
          key: shopRateKey(principal.shopId),
          limit: limits.ratePerMinute.perShop,
          who: 'this shop (all grants together)',
          scope: 'shop',
        },
      ] as const;
      // Both windows in one statement; a request the grant's limit refuses is taken back from the
      // shop's window, so one grant over its limit does not use up the budget of the shop's others.
      await recordGrantUse(tx, principal, now);
      const counts = await hitRates(
        tx,
        rates.map((r) => r.key),
        now,
      );
      for (const [i, r] of rates.entries()) {
        const count = counts[i] ?? 0;
        if (count > r.limit) {
          if (i === 0) await unhitRate(tx, rates[1].key, now);
          const retryAfterS = retryAfterSeconds(now);
          if (count === r.limit + 1) {
            // Audit the first refusal of a window only, so a flood cannot grow the log.
            await appendAudit(tx, {
              shopId: principal.shopId,
              actor: { grantId: principal.grantId, kind: principal.actor.kind, name: principal.actor.name },
              action: op.operationId,
              outcome: 'refused',
              requestId: requestId ?? null,
              at: now,
              details: { code: 'rate_limited', limit_scope: r.scope, limit_per_minute: r.limit },
            });
          }
          return new AppError('rate_limited', {
            detail: `Rate limit reached: ${r.who} may make ${r.limit} requests per minute. Retry after ${retryAfterS} s.`,
            reason: `Per-${r.scope} limit of ${r.limit} requests per minute reached.`,
            retryAfterS,
            extra: { limit_scope: r.scope, limit_per_minute: r.limit },
          });
        }
      }
      if (op.meter === null) return null;
      if (CAP_EXEMPT_OPERATIONS.has(op.operationId)) {
        await recordUsage(tx, principal.shopId, op.meter, { now });
        return null;
      }
      const cap = meterCap(limits, op.meter);
      if (await consumeUsage(tx, principal.shopId, op.meter, cap, now)) {
        consumed = op.meter;
        return null;
      }
      const used = (await usageFor(tx, principal.shopId, now))[op.meter];
      const resetsAt = new Date(periodBounds(now).end).toISOString();
      // Audited once per grant, meter and window like the other repeatable refusals; counted otherwise.
      const first = await firstRefusalOfWindow(tx, refusalAuditKey(principal.grantId, `cap:${op.meter}`), now);
      if (first) {
        await appendAudit(tx, {
          shopId: principal.shopId,
          actor: { grantId: principal.grantId, kind: principal.actor.kind, name: principal.actor.name },
          action: op.operationId,
          outcome: 'refused',
          requestId: requestId ?? null,
          at: now,
          details: {
            code: 'plan_limit_reached',
            meter: op.meter,
            used,
            limit: cap,
            ...(first.previousWindow > 1 ? { refused_in_previous_window: first.previousWindow } : {}),
          },
        });
      }
      return new AppError('plan_limit_reached', {
        detail: `The ${limits.plan.name} plan allows ${cap} ${op.meter.replace('_', ' ')}s per month and ${used} were used. The counter resets at ${resetsAt}.`,
        reason: `Monthly ${op.meter} cap of the ${limits.plan.name} plan reached.`,
        extra: { meter: op.meter, used, limit: cap, plan: limits.plan.id, resets_at: resetsAt },
      });
      // Counters, not promises: a crash may lose the last few milliseconds' counts, in the caller's
      // favour. A side effect's own transaction is durable and, the log being in order, makes this
      // one durable too (ADR 0308).
    },
    { durability: 'lazy' },
  );
  if (refusal) throw refusal;
  const meter = consumed;
  if (meter === null || !COUNTED_ON_SUCCESS.has(meter)) return undefined;
  return { refund: () => refundUsage(services.db, principal.shopId, meter, now) };
}
