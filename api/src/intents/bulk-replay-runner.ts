// Runs confirmed bulk replays in the background (every process with a delivery worker runs one).
// A run is leased to one process at a time (re-claimed after its lease lapses: a crash), and its
// items are replayed one by one, oldest first, at the run's rate. Each item is replayed in ONE
// transaction that moves it from pending to replayed (or refused), meters it, and inserts its
// replay event: a process killed at any point leaves each item either done with exactly one
// replay, or pending with none, so a bulk replay never replays an event twice (ADR 1300). An item
// is replayed only while its intent holds the event's claim (ADR 0410): the replay is bound to the
// claim in that same transaction, and a refused item releases it.
import { BackgroundLoop } from './background-loop.ts';
import { type AuditActor, appendAudit } from '../audit/log.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { AppError } from '../errors/problem.ts';
import { replayAvailability } from '../handoff/lifecycle.ts';
import { newId } from '../ids.ts';
import type { Services } from '../core/types.ts';
import { intentConfirmer } from '../reads/action-intents.ts';
import type { Db } from '../store/db.ts';
import { findEndpoint } from '../store/tables/endpoints.ts';
import { findShopEvent, insertReplayCopy } from '../store/tables/events/intents.ts';
import {
  findBulkReplayRun,
  leaseBulkReplayRun,
  listPendingBulkReplayItems,
  listRunnableBulkReplays,
  markConfirmedIntentExecuted,
  refusePendingBulkReplayItem,
  releaseBulkReplayRunLease,
  setBulkReplayItemRefused,
  setBulkReplayItemReplay,
  takeBulkReplayItem,
} from '../store/tables/intents.ts';
import { findShop } from '../store/tables/shops.ts';
import { bulkReplayProgress } from './bulk-replay-progress.ts';
import type { EventRow } from './kinds/common.ts';
import { BULK_REFUSAL_CODE } from './kinds/bulk-replay.ts';
import { bindReplay, releaseClaim, releaseIntentClaims } from './replay-claims.ts';
import { consumeExecution } from './usage.ts';

const POLL_MS = 500;

/** Whether a bulk replay's parameters acknowledge recovered events (`acknowledge_recovered: true`). */
function acknowledgesRecovered(paramsJson: string | null): boolean {
  try {
    return (JSON.parse(paramsJson ?? '{}') as { acknowledge_recovered?: unknown }).acknowledge_recovered === true;
  } catch {
    return false;
  }
}
const BATCH = 50;

type ItemOutcome = { status: 'replayed'; replayEventId: string } | { status: 'refused'; reason: ErrorCode } | null;

export class BulkReplayRunner extends BackgroundLoop {
  readonly owner = `blk_${newId('request').slice(4)}`;
  private readonly services: Services;
  private again = false;

  constructor(services: Services) {
    super();
    this.services = services;
  }

  protected wake(): void {
    this.kick();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.runPass(
      () => this.loop(),
      this.services.log,
      'bulk_replay_error',
      () => {
        if (this.again) {
          this.again = false;
          this.kick();
        } else this.timer = setTimeout(() => this.kick(), POLL_MS);
      },
    );
  }

  private leaseMs(): number {
    return this.services.config.worker.leaseMs;
  }

  /** Runs every confirmed bulk replay no other live process holds, one after another. */
  private async loop(): Promise<void> {
    const { db } = this.services;
    for (;;) {
      if (this.stopped) return;
      const now = this.services.now();
      const candidates = await listRunnableBulkReplays(db, now, this.owner);
      let ran = false;
      for (const c of candidates) {
        if (await this.claim(c.intent_id)) {
          ran = true;
          await this.run(c.intent_id);
        }
      }
      if (!ran) return;
    }
  }

  private async claim(intentId: string): Promise<boolean> {
    const now = this.services.now();
    return leaseBulkReplayRun(this.services.db, intentId, this.owner, now, now + this.leaseMs());
  }

  private async run(intentId: string): Promise<void> {
    const { db } = this.services;
    const run = await findBulkReplayRun(db, intentId);
    if (!run) return;
    const rate = Math.max(1, Number(run.rate_per_second));
    // Recovered events are skipped unless the preview acknowledged them (ADR 0420).
    const recovered = acknowledgesRecovered(run.params_json);
    const started = performance.now();
    let made = 0;
    let leaseRenewedAt = this.services.now();
    for (;;) {
      if (this.stopped) return;
      const items = await listPendingBulkReplayItems(db, intentId, BATCH);
      if (items.length === 0) break;
      for (const item of items) {
        if (this.stopped) return;
        // The bounded rate: item n is not made before n / rate seconds into this run.
        const due = started + (made / rate) * 1000;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const now = this.services.now();
        if (now - leaseRenewedAt > this.leaseMs() / 3) {
          if (!(await this.claim(intentId))) return; // another process took it over
          leaseRenewedAt = now;
        }
        const outcome = await this.replayItem(intentId, run.shop_id, Number(item.seq), item.event_id, recovered);
        if (outcome === null) continue; // cancelled (or done by another runner) meanwhile
        made++;
        this.services.metrics?.bulkReplayEvents.inc({ result: outcome.status });
        const log = this.services.log;
        if (log?.isLevelEnabled('debug'))
          log.debug(
            {
              kind: 'bulk_replay_item',
              intent_id: intentId,
              shop_id: run.shop_id,
              event_id: item.event_id,
              outcome: outcome.status,
              ...(outcome.status === 'replayed'
                ? { replay_event_id: outcome.replayEventId }
                : { reason: outcome.reason }),
            },
            'bulk replay item',
          );
        if (outcome.status === 'replayed' && made % 10 === 1) this.services.hooks.kickWorker?.();
      }
      this.services.hooks.kickWorker?.();
    }
    await this.finish(intentId, run.shop_id);
  }

  /** One item, one transaction: claimed from pending, checked, metered, replayed. */
  private async replayItem(
    intentId: string,
    shopId: string,
    seq: number,
    eventId: string,
    acknowledgeRecovered: boolean,
  ): Promise<ItemOutcome> {
    const { db } = this.services;
    try {
      return await db.tx(async (tx) => {
        const now = this.services.now();
        if (!(await takeBulkReplayItem(tx, intentId, seq, now))) return null;
        const refusal = await this.refusalOf(tx, shopId, eventId, now, acknowledgeRecovered);
        const refused = refusal.code;
        if (refused) {
          await setBulkReplayItemRefused(tx, intentId, seq, refused);
          await releaseClaim(tx, eventId, intentId);
          return { status: 'refused', reason: refused };
        }
        const id = newId('event', now);
        // Only while this run holds the event's claim, and the replay is bound to it here: another
        // replay of the event cannot start until this one is terminal.
        if (!(await bindReplay(tx, eventId, intentId, id))) throw new AppError('replay_in_flight');
        await consumeExecution(tx, shopId, 'replays', now);
        const endpoint = await findEndpoint(tx, refusal.endpointId);
        // As a single replay does (api/src/intents/kinds/replay.ts): one copy statement, which
        // checks the body is still there.
        const copied = await insertReplayCopy(tx, {
          replayId: id,
          originalId: eventId,
          shopId,
          configVersion: Number(endpoint?.config_version ?? 1),
          now,
        });
        if (!copied) throw new AppError('retention_expired');
        await setBulkReplayItemReplay(tx, intentId, seq, id);
        return { status: 'replayed', replayEventId: id };
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Refused inside the transaction (a cap reached, the body purged meanwhile, the event's claim
      // not this run's): it rolled back, so nothing was metered or replayed; the item records why
      // and gives back its claim, if it held one.
      const code = err.code;
      return db.tx(async (tx) => {
        if (!(await refusePendingBulkReplayItem(tx, intentId, seq, code, this.services.now()))) return null;
        await releaseClaim(tx, eventId, intentId);
        return { status: 'refused', reason: code };
      });
    }
  }

  /** Why this event cannot be replayed now (it may have changed since the preview), or null; and its endpoint. */
  private async refusalOf(
    tx: Db,
    shopId: string,
    eventId: string,
    now: number,
    acknowledgeRecovered: boolean,
  ): Promise<{ code: ErrorCode | null; endpointId: string }> {
    const ev = await findShopEvent<EventRow>(tx, shopId, eventId);
    if (!ev) return { code: 'not_found', endpointId: '' };
    const refused = (code: ErrorCode | null) => ({ code, endpointId: ev.endpoint_id });
    const endpoint = await findEndpoint(tx, ev.endpoint_id);
    const shop = await findShop(tx, shopId);
    if (!endpoint || !shop) return refused(BULK_REFUSAL_CODE.endpoint_deleted);
    const a = replayAvailability(ev, endpoint, shop);
    if (!a.available) return refused(BULK_REFUSAL_CODE[a.reason ?? 'retention_expired']);
    if (ev.body_expires_at !== null && Number(ev.body_expires_at) <= now)
      return refused(BULK_REFUSAL_CODE.retention_expired);
    // Recovered since the preview (another replay of it reached Flow meanwhile): not replayed again.
    if (ev.recovered_by && !acknowledgeRecovered) return refused(BULK_REFUSAL_CODE.already_recovered);
    return refused(null);
  }

  private async finish(intentId: string, shopId: string): Promise<void> {
    const { db } = this.services;
    const now = this.services.now();
    await db.tx(async (tx) => {
      const progress = await bulkReplayProgress(tx, intentId);
      const result = {
        total: progress.total,
        replayed: progress.replayed,
        refused: progress.refused,
        refused_by_reason: progress.refused_by_reason,
        rate_per_second: progress.rate_per_second,
        finished_at: new Date(now).toISOString(),
        links: { items: `/agent/v1/action-intents/${intentId}/items` },
      };
      const done = await markConfirmedIntentExecuted(tx, intentId, now, JSON.stringify(result));
      await releaseBulkReplayRunLease(tx, intentId, now);
      // Nothing is pending now: no claim of this run can be left without its replay.
      await releaseIntentClaims(tx, intentId);
      if (!done) return;
      const { grant: who, requestId } = await intentConfirmer(tx, intentId);
      await appendAudit(tx, {
        shopId,
        actor: who
          ? { grantId: who.id, kind: who.actor_kind as AuditActor['kind'], name: who.actor_name }
          : { kind: 'system', name: 'bulk replay runner' },
        action: 'bulk_replay.execute',
        targetType: 'action_intent',
        targetId: intentId,
        outcome: 'success',
        // The confirmation that started the run: the execution is tied to that call.
        requestId,
        at: now,
        details: { kind: 'bulk_replay', result },
      });
    });
  }
}
