// Holds and probes: events of a shop Shopify refuses (UNAVAILABLE_SHOP) or that is disconnected
// are held instead of sent; a refused shop is probed now and then with one held event, and an
// accepted probe releases the rest (api/src/handoff/lifecycle.ts, releaseShopInTx). Also the
// attempts a hold or a re-claim closes, and the attempts that count against the retry schedule.
import type { Services } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import { abandonAttempts, countAttemptsWithOutcome } from '../store/tables/attempts.ts';
import { findPendingProbe, holdDueEvent, oldestHeldEvent, queueProbeEvent } from '../store/tables/events/deliver.ts';
import { setProbeEvent, shopsWithProbeDue, takeProbeTurn } from '../store/tables/shops.ts';
import { HELD_ATTEMPT_OUTCOMES, SUPPORT_CODES, type SupportCodeKey, UNAVAILABLE_SHOP_STATUSES } from './outcomes.ts';

/** What an abandoned attempt (its worker died mid-call) says. */
const ABANDONED_NOTE = 'lease expired before the outcome was recorded; Flow may have received this call';

/** How often a worker looks for shops Shopify refuses (UNAVAILABLE_SHOP) whose probe is due. */
const PROBE_CHECK_MS = 1_000;

/**
 * Shops Shopify refuses (UNAVAILABLE_SHOP) whose probe is due: each gets its next probe time
 * and, unless its last probe is still pending, one held event (the oldest) queued as its probe.
 * The conditional UPDATE lets one worker of many start it.
 */
export class Prober {
  private checkedAt = Number.NEGATIVE_INFINITY;
  private readonly services: Pick<Services, 'db' | 'config'>;

  constructor(services: Pick<Services, 'db' | 'config'>) {
    this.services = services;
  }

  async startDueProbes(now: number): Promise<void> {
    const { db, config } = this.services;
    if (now - this.checkedAt < Math.min(PROBE_CHECK_MS, config.worker.shopProbeIntervalMs)) return;
    this.checkedAt = now;
    const due = await shopsWithProbeDue(db, now, UNAVAILABLE_SHOP_STATUSES);
    for (const shop of due) {
      await db.tx(async (tx) => {
        const won = await takeProbeTurn(tx, {
          shopId: shop.id,
          now,
          nextProbeAt: now + config.worker.shopProbeIntervalMs,
          statuses: UNAVAILABLE_SHOP_STATUSES,
        });
        if (won === 0) return;
        // One probe at a time: the last one is still queued (e.g. retrying after a 5xx) or in flight.
        if (await findPendingProbe(tx, shop.id)) return;
        const probe = await oldestHeldEvent(tx, shop.id);
        await setProbeEvent(tx, shop.id, probe?.id ?? null);
        if (probe) await queueProbeEvent(tx, probe.id, now);
      });
    }
  }
}

/** Holds a due event of a held shop instead of sending it; a re-claimed lease's attempt ends here. */
export async function holdInTx(
  tx: Db,
  e: { eventId: string; support: SupportCodeKey; now: number; leaseNow: number; reclaimed: boolean },
): Promise<void> {
  const held = await holdDueEvent(tx, {
    id: e.eventId,
    code: SUPPORT_CODES[e.support],
    now: e.now,
    leaseNow: e.leaseNow,
    reclaimed: e.reclaimed,
  });
  // The dead holder's attempt ends here too, as a re-claim that delivers would end it.
  if (e.reclaimed && held > 0) await abandonOrphans(tx, [e.eventId], e.now);
}

/**
 * Attempts that count against the retry schedule: all but those Shopify refused for the store
 * (UNAVAILABLE_SHOP), which a long refusal would otherwise pile up on a probed event.
 */
export async function countedAttempts(tx: Db, ev: { id: string; attempt_count: number }): Promise<number> {
  return Number(ev.attempt_count) - (await countAttemptsWithOutcome(tx, ev.id, HELD_ATTEMPT_OUTCOMES));
}

/** Closes the in-progress attempts of events whose lease expired (their worker died mid-call). */
export async function abandonOrphans(tx: Db, eventIds: string[], now: number): Promise<void> {
  if (eventIds.length === 0) return;
  await abandonAttempts(tx, eventIds, now, ABANDONED_NOTE);
}
