// The delivery worker: claims due events with a lease, hands each to Shopify
// Flow, records every attempt, and maps the answer to the event's next state.
// At-least-once: a lease that expires mid-delivery (a crashed worker) makes the
// event claimable again; that re-claim is counted as a possible duplicate.
// See docs/adr/0200-handoff-worker.md for the decisions. This file runs the loop; each step has
// its own: claim.ts (claim), deliver.ts (the Flow call), record.ts (record outcome), pace.ts (shop
// buckets and throttling), hold.ts (held shops and their probes).
import { newId } from '../ids.ts';
import type { Services } from '../core/types.ts';
import { GroupCommitter } from '../store/committer.ts';
import type { ShopRow } from '../store/tables/shops.ts';
import { type ClaimedEvent, type ClaimHost, claimDue } from './claim.ts';
import { type DeliverHost, deliverEvent } from './deliver.ts';
import type { FlowCallResult } from './flow-client.ts';
import { Prober } from './hold.ts';
import { sweepRetention } from './lifecycle.ts';
import type { AttemptOutcome, Classified } from './outcomes.ts';
import { LeaseClock, Pacer } from './pace.ts';
import { recordOutcome } from './record.ts';

export interface WorkerOptions {
  /** Resolves the Admin API base URL for a shop (sandbox shops point at the stand-in). */
  adminBaseUrl(shop: ShopRow): string;
  /** Background loops that run exactly while the worker does (e.g. the bulk replay runner). */
  companions?: readonly WorkerCompanion[];
}

export interface WorkerCompanion {
  start(): void;
  stop(): Promise<void>;
}

/** In-process counters for /metrics (the store holds the durable facts). */
export interface WorkerStats {
  attempts: Partial<Record<AttemptOutcome, number>>;
  reclaimedLeases: number;
  claimTransactions: number;
}

export class DeliveryWorker {
  readonly owner = `wrk_${newId('request').slice(4)}`;
  readonly stats: WorkerStats = { attempts: {}, reclaimedLeases: 0, claimTransactions: 0 };
  private readonly services: Services;
  private readonly inflight = new Set<Promise<void>>();
  /** This process's deliveries in flight per shop: a lower bound of the shop's live leases. */
  private readonly inflightByShop = new Map<string, number>();
  /** Group commit of delivery outcomes. */
  private readonly recorder: GroupCommitter;
  /** The store clock's offset from this process's (leases are on the store's clock). */
  private readonly clock: LeaseClock;
  /** Each shop's bucket at Shopify as this worker accounts for it, and the pauses Shopify asked for. */
  private readonly pacer: Pacer;
  private readonly claimHost: ClaimHost;
  private readonly deliverHost: DeliverHost;
  private timer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private pumping = false;
  private again = false;
  private stopped = true;
  /** Started and stopped with the worker (the bulk replay runner, wired in api/src/runtime.ts). */
  private readonly companions: readonly WorkerCompanion[];

  constructor(services: Services, options: WorkerOptions) {
    this.services = services;
    this.companions = options.companions ?? [];
    this.recorder = new GroupCommitter(services.db, {
      maxBatch: 128,
      ...(services.metrics ? { observe: services.metrics.committerObserver('handoff') } : {}),
    });
    this.clock = new LeaseClock(services);
    const worker = this;
    this.pacer = new Pacer({
      services,
      clock: this.clock,
      get stopped() {
        return worker.stopped;
      },
      kick: () => this.kick(),
      log: (message, err) => this.log(message, err),
    });
    this.claimHost = {
      services,
      owner: this.owner,
      stats: this.stats,
      pacer: this.pacer,
      clock: this.clock,
      prober: new Prober(services),
      inflightByShop: this.inflightByShop,
    };
    this.deliverHost = {
      services,
      adminBaseUrl: (shop) => options.adminBaseUrl(shop),
      pace: (ev, result, classified) => this.pacer.pace(ev, result, classified),
      record: (ev, c, result, local) => this.record(ev, c, result, local),
    };
  }

  get inFlight(): number {
    return this.inflight.size;
  }

  /** Shops this process is pausing for Shopify's throttling right now (/metrics). */
  throttledShops(): number {
    return this.pacer.throttledShops(this.services.now());
  }

  /** Points the shop's bucket holds now by this worker's account (Infinity before any answer said). */
  pointsFor(shopId: string, now: number): number {
    return this.pacer.pointsFor(shopId, now);
  }

  start(): void {
    this.stopped = false;
    for (const c of this.companions) c.start();
    this.kick();
    const sweep = async () => {
      if (this.stopped) return;
      const m = this.services.metrics;
      try {
        const purged = await sweepRetention(this.services);
        m?.retentionSweeps.inc({ result: 'ok' });
        m?.retentionPurged.inc(purged);
      } catch (err) {
        m?.retentionSweeps.inc({ result: 'failed' });
        this.log('retention sweep failed:', err);
      }
      if (!this.stopped)
        this.sweepTimer = setTimeout(() => void sweep(), this.services.config.worker.retentionSweepIntervalMs);
    };
    void sweep();
  }

  /** Stops claiming and waits for deliveries in flight to finish recording. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.companions.map((c) => c.stop()));
    if (this.timer) clearTimeout(this.timer);
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    this.pacer.stop();
    while (this.pumping) await new Promise((r) => setTimeout(r, 5));
    await Promise.allSettled([...this.inflight]);
  }

  /** Wake the worker: new events are due. */
  kick(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    void this.pump();
  }

  private log(message: string, err: unknown): void {
    this.services.log?.error(
      { kind: 'worker_error', error: err instanceof Error ? (err.stack ?? err.message) : String(err) },
      message,
    );
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    if (this.timer) clearTimeout(this.timer);
    try {
      do {
        this.again = false;
        const free = this.services.config.worker.maxInFlight - this.inflight.size;
        if (free <= 0) break;
        const batch = await this.claim(free);
        for (const ev of batch) this.startDelivery(ev);
        if (batch.length === free) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      this.log('worker claim failed:', err);
    } finally {
      this.pumping = false;
    }
    if (!this.stopped) this.timer = setTimeout(() => this.kick(), this.services.config.worker.pollIntervalMs);
  }

  /** Delivers a claimed event in the background, counted in flight until its outcome is recorded. */
  private startDelivery(ev: ClaimedEvent): void {
    this.inflightByShop.set(ev.shop_id, (this.inflightByShop.get(ev.shop_id) ?? 0) + 1);
    // ev.seq is already in flight for pacing: the claim counted it when it took the call's point.
    const p: Promise<void> = deliverEvent(this.deliverHost, ev)
      .catch((err) => this.log('delivery failed unexpectedly:', err))
      .finally(() => {
        this.inflight.delete(p);
        const left = (this.inflightByShop.get(ev.shop_id) ?? 1) - 1;
        if (left > 0) this.inflightByShop.set(ev.shop_id, left);
        else this.inflightByShop.delete(ev.shop_id);
        this.pacer.endCall(ev.shop_id, ev.seq);
        this.kick();
      });
    this.inflight.add(p);
  }

  /**
   * Claims up to `limit` due events (queued and due, or delivering with an expired lease); safe
   * with any number of workers in any number of processes (claim.ts).
   */
  async claim(limit: number): Promise<ClaimedEvent[]> {
    return claimDue(this.claimHost, limit);
  }

  /** Records one delivery's outcome (record.ts), group-committed by `recorder`. */
  private async record(
    ev: ClaimedEvent,
    c: Classified,
    result: FlowCallResult | null,
    local: Record<string, unknown> | null,
  ): Promise<void> {
    return recordOutcome({ services: this.services, recorder: this.recorder, stats: this.stats }, ev, c, result, local);
  }
}
