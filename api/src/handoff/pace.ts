// Pacing (ADR 0200, "Pacing"): each shop's leaky bucket at Shopify as this worker accounts for it,
// the pauses Shopify asks for, and the wake-ups when a paused shop has points again. On PostgreSQL
// the account of a shop whose bucket ran low is its row in `shop_buckets`, shared by every worker.
import type { Services } from '../core/types.ts';
import { storeClockMs } from '../store/clock.ts';
import { lowerSharedBucket, type SharedBucket } from '../store/tables/shops.ts';
import type { FlowCallResult } from './flow-client.ts';
import type { Classified } from './outcomes.ts';

/** What one flowTriggerReceive call costs (Shopify charges 1 point; REFERENCE-FACTS.md). */
export const TRIGGER_COST = 1;

/** How often a worker re-measures the store clock's offset from its own (Postgres). */
const LEASE_CLOCK_REFRESH_MS = 60_000;

/**
 * How often at most a worker writes a shop's shared account from answers that show the bucket low
 * (THROTTLED answers, and a low answer for a shop it knows no shared account of, are always
 * written): claims keep the account between answers, so an answer only catches what they cannot
 * know (another app's calls), and writing every one would be a write per call.
 */
const SHARED_CORRECTION_MS = 100;

/** Restore time kept back in a shop's bucket account for the clocks' difference (`callsFor`). */
const CLOCK_RESERVE_MS = 10;

/** How long a shop's bucket account is kept once it is full and unused (bounds the map). */
const BUCKET_FORGET_MS = 10 * 60_000;

/**
 * This worker's picture of a shop's leaky bucket at Shopify (ADR 0200, "Pacing"): what the last
 * answer's `throttleStatus` said, less the calls sent since, refilled at the restore rate.
 */
interface ShopBucket {
  /** The claim order of the call whose answer set this account: an older call's answer, arriving later, is stale. */
  seq: number;
  available: number;
  at: number;
  restoreRate: number;
  maximumAvailable: number;
  /**
   * The account is the shop's row in `shop_buckets` as this worker last read or wrote it (Postgres):
   * claims take points from the row, and only answers written to the row change it.
   */
  shared: boolean;
}

/**
 * The store's clock minus this process's (Postgres; 0 on SQLite, one machine). Leases are a
 * promise between workers on different machines, so they are written and judged by the one
 * clock all workers share: a worker whose clock runs ahead must not take over calls still in
 * flight (Flow would run them twice), one that runs behind must not recover late.
 */
export class LeaseClock {
  offsetMs = 0;
  private checkedAt = Number.NEGATIVE_INFINITY;
  private readonly services: Pick<Services, 'db' | 'now'>;

  constructor(services: Pick<Services, 'db' | 'now'>) {
    this.services = services;
  }

  /** Re-measures the offset now and then (clocks drift slowly). */
  async refresh(now: number): Promise<void> {
    const { db } = this.services;
    if (db.dialect !== 'postgres' || now - this.checkedAt < LEASE_CLOCK_REFRESH_MS) return;
    const before = Date.now();
    const ms = await storeClockMs(db);
    const local = this.services.now() - (Date.now() - before) / 2;
    if (ms !== null) this.offsetMs = Math.round(ms - local);
    this.checkedAt = now;
  }
}

/** What the pacer needs of its worker. */
export interface PacerHost {
  readonly services: Services;
  readonly clock: LeaseClock;
  readonly stopped: boolean;
  kick(): void;
  log(message: string, err: unknown): void;
}

/** One worker's pacing of the shops it calls. */
export class Pacer {
  /** Shops Shopify asked us to slow down for without a bucket to pace by (Retry-After), until the given time. */
  private readonly shopPausedUntil = new Map<string, number>();
  /** Each shop's bucket as the last answer (or, on Postgres, its shared row) described it (pacing). */
  private readonly buckets = new Map<string, ShopBucket>();
  /** When this worker last wrote each shop's shared account from an answer (Postgres). */
  private readonly sharedWrittenAt = new Map<string, number>();
  /** A wake-up for when a paused shop has points again. */
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Number.POSITIVE_INFINITY;
  /** Claim order of calls, and each shop's calls in flight by it (pacing). */
  private callSeq = 0;
  /** THROTTLED answers in a row per shop (pacing across processes). */
  private readonly throttleStreak = new Map<string, number>();
  private readonly inflightSeqs = new Map<string, Set<number>>();
  private readonly host: PacerHost;

  constructor(host: PacerHost) {
    this.host = host;
  }

  /** Shops this process is pausing for Shopify's throttling right now (/metrics). */
  throttledShops(now: number): number {
    let n = 0;
    for (const [shop, until] of this.shopPausedUntil) if (until > now || this.pointsFor(shop, now) < TRIGGER_COST) n++;
    for (const shop of this.buckets.keys())
      if (!this.shopPausedUntil.has(shop) && this.pointsFor(shop, now) < TRIGGER_COST) n++;
    return n;
  }

  /** Points the shop's bucket holds now by this worker's account (Infinity before any answer said). */
  pointsFor(shopId: string, now: number): number {
    const b = this.buckets.get(shopId);
    if (!b) return Number.POSITIVE_INFINITY;
    return Math.min(b.maximumAvailable, b.available + (Math.max(0, now - b.at) / 1000) * b.restoreRate);
  }

  /**
   * Whole calls the shop's bucket pays for now, keeping back what it restores in
   * `CLOCK_RESERVE_MS`: the account restores on this worker's (or the database's) clock and
   * Shopify's bucket on its own, so a call sent the instant the account has its point can reach
   * Shopify just before the bucket does. The reserve moves calls later by that much; it does not
   * lower the rate, which is the bucket's restore rate either way.
   */
  callsFor(shopId: string, now: number): number {
    const b = this.buckets.get(shopId);
    const reserve = b ? (b.restoreRate * CLOCK_RESERVE_MS) / 1000 : 0;
    return Math.floor((this.pointsFor(shopId, now) - reserve) / TRIGGER_COST);
  }

  /** When the shop may be called again (its pause over and a call's points back), or `now`. */
  readyAt(shopId: string, now: number): number {
    let at = Math.max(now, this.shopPausedUntil.get(shopId) ?? 0);
    const b = this.buckets.get(shopId);
    if (b && b.restoreRate > 0) {
      const missing = TRIGGER_COST + (b.restoreRate * CLOCK_RESERVE_MS) / 1000 - this.pointsFor(shopId, now);
      if (missing > 0) at = Math.max(at, now + Math.ceil((missing / b.restoreRate) * 1000));
    }
    return at;
  }

  /** Kicks the worker at `at` (the earliest of the wake-ups asked for). */
  wakeUpAt(at: number): void {
    if (this.host.stopped || at >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.wakeAt = Number.POSITIVE_INFINITY;
        this.host.kick();
      },
      Math.max(0, at - this.host.services.now()),
    );
  }

  /** Wakes the worker when the shop has points again, if it has none now. */
  wakeWhenReady(shopId: string, now: number): void {
    const at = this.readyAt(shopId, now);
    if (at > now) this.wakeUpAt(at);
  }

  stop(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
  }

  /**
   * The shops a claim leaves out now: paused, or with no `room` (this worker's calls left). A bucket
   * account full for a long while says nothing an answer would not say again: dropped.
   */
  shopsToSkip(now: number, busyShops: Iterable<string>, room: (shop: string) => number): Set<string> {
    const skip = new Set<string>();
    for (const [shop, until] of this.shopPausedUntil) if (until > now) skip.add(shop);
    for (const shop of busyShops) if (room(shop) < 1) skip.add(shop);
    for (const [shop, b] of this.buckets) {
      if (now - b.at > BUCKET_FORGET_MS && this.pointsFor(shop, now) >= b.maximumAvailable) {
        this.buckets.delete(shop);
        this.sharedWrittenAt.delete(shop);
      } else if (room(shop) < 1) skip.add(shop);
    }
    return skip;
  }

  /**
   * A claimed call in flight from now on, in claim order; unless its shop's account is shared,
   * its points come out of this worker's account. An answer arriving before this call is sent (the
   * claim still waits for its commit) must count it among the calls Shopify has not seen yet, or
   * resetting the account would hand its point out again. Returns the call's claim order.
   */
  startCall(shopId: string, now: number, shared: boolean): number {
    const seq = ++this.callSeq;
    if (!shared) this.spend(shopId, now);
    const seqs = this.inflightSeqs.get(shopId) ?? new Set<number>();
    seqs.add(seq);
    this.inflightSeqs.set(shopId, seqs);
    return seq;
  }

  /** The call is no longer in flight (answered, or its claim failed). */
  endCall(shopId: string, seq: number): void {
    const seqs = this.inflightSeqs.get(shopId);
    seqs?.delete(seq);
    if (seqs?.size === 0) this.inflightSeqs.delete(shopId);
  }

  /** Takes one call's points from the shop's bucket as this worker accounts for it. */
  private spend(shopId: string, now: number): void {
    const b = this.buckets.get(shopId);
    if (!b) return;
    b.available = this.pointsFor(shopId, now) - TRIGGER_COST;
    b.at = now;
  }

  /**
   * Paces the shop by Shopify's throttle status (ADR 0200, "Pacing"). Every answer resets this
   * worker's account of the shop's bucket to what Shopify said, less this worker's other calls
   * still in flight (Shopify may not have counted them yet); the claim then starts no call the
   * bucket cannot pay for, and a wake-up comes when it can. So the first THROTTLED waits exactly
   * (cost − currentlyAvailable) / restoreRate, and a success showing the bucket low slows the
   * shop before it runs dry. On Postgres, once an answer shows the bucket low, the account is the
   * one all workers share (`correctShared`). Retry-After (429) pauses the shop as asked; a
   * throttled answer with neither pauses it a second. Other shops are not affected.
   */
  async pace(
    ev: { id: string; shop_id: string; seq: number },
    result: FlowCallResult,
    classified: Classified,
  ): Promise<void> {
    const { services } = this.host;
    let now = services.now();
    const shopId = ev.shop_id;
    const status = result.throttleStatus;
    const last = this.buckets.get(shopId);
    const throttled = classified.outcome === 'throttled';
    if (status && status.restoreRate > 0 && Number.isFinite(status.currentlyAvailable)) {
      // Low: below half, or few enough that the calls a shop may have in flight (its concurrency,
      // across all workers) could empty it before another answer said so. A bucket far from empty
      // is not written: the shop's calls are bounded by its concurrency there anyway.
      const lowAt = Math.max(status.maximumAvailable / 2, 2 * services.config.worker.concurrencyPerShop * TRIGGER_COST);
      const share =
        services.db.dialect === 'postgres' &&
        (throttled ||
          (status.currentlyAvailable < lowAt &&
            (!last?.shared || now - (this.sharedWrittenAt.get(shopId) ?? 0) >= SHARED_CORRECTION_MS)));
      if (share) {
        await this.correctShared(ev, status);
        now = services.now();
      } else if (!last?.shared && !(last && last.seq > ev.seq)) {
        // Answers to calls made together arrive in any order: only one to a call claimed after the
        // one that last set the account says something newer. This worker's other calls still in
        // flight: Shopify may not have counted them yet (calls sent together reach it in any
        // order, so earlier ones count too).
        const others = (this.inflightSeqs.get(shopId)?.size ?? 1) - 1;
        this.buckets.set(shopId, {
          seq: ev.seq,
          available: status.currentlyAvailable - Math.max(0, others) * TRIGGER_COST,
          at: now,
          restoreRate: status.restoreRate,
          maximumAvailable: status.maximumAvailable,
          shared: false,
        });
      }
    }
    this.pauseFor(shopId, result, throttled, now);
    const at = this.readyAt(shopId, now);
    if (at > now || throttled) services.metrics?.throttles.inc();
    if (at > now) this.wakeUpAt(at);
  }

  /**
   * A THROTTLED answer although the account said a point was there: another client of the
   * bucket spent it (an app outside Flowport, or, before the shop's account is shared on
   * PostgreSQL, another worker process). Leave it the next points, more each time in a row and with
   * jitter, so the clients sharing a shop's bucket stop calling in step.
   */
  private pauseFor(shopId: string, result: FlowCallResult, throttled: boolean, now: number): void {
    const status = result.throttleStatus;
    if (throttled) {
      const streak = (this.throttleStreak.get(shopId) ?? 0) + 1;
      this.throttleStreak.set(shopId, streak);
      const restore = status && status.restoreRate > 0 ? (TRIGGER_COST / status.restoreRate) * 1000 : 0;
      const yieldMs = restore * 2 ** Math.min(streak, 6) * (0.5 + Math.random());
      const pause = Math.max(result.retryAfterMs, status ? yieldMs : 1000);
      if (pause > 0) this.shopPausedUntil.set(shopId, Math.max(this.shopPausedUntil.get(shopId) ?? 0, now + pause));
    } else {
      this.throttleStreak.delete(shopId);
      if ((this.shopPausedUntil.get(shopId) ?? 0) <= now) this.shopPausedUntil.delete(shopId);
    }
  }

  /**
   * Lowers the shop's shared account (Postgres; creates it) to what Shopify said, less every
   * worker's other calls in flight for the shop (live leases: Shopify may not have counted them),
   * if that is less than the account refilled to now. Only lowered: the claims take every call's
   * points, so an answer can only add news of points spent elsewhere (another app), while an older
   * answer arriving late, or one whose count missed a claim committing meanwhile, would hand out
   * points twice; the row's own values are read after its lock, so a claim's take is never undone.
   * Awaited before the outcome is recorded: the call's lease still counts, and its slot is not
   * freed for a claim before the account is written. Bookkeeping a crash may lose (the next answer
   * writes it again): committed lazily.
   */
  private async correctShared(
    ev: { id: string; shop_id: string },
    status: NonNullable<FlowCallResult['throttleStatus']>,
  ): Promise<void> {
    const { db } = this.host.services;
    const now = this.host.services.now();
    const dbNow = Math.round(now + this.host.clock.offsetMs);
    this.sharedWrittenAt.set(ev.shop_id, now);
    try {
      const row = await db.tx(
        (tx) =>
          lowerSharedBucket(tx, {
            shopId: ev.shop_id,
            eventId: ev.id,
            available: status.currentlyAvailable,
            restoreRate: status.restoreRate,
            maximumAvailable: status.maximumAvailable,
            dbNow,
            cost: TRIGGER_COST,
          }),
        { durability: 'lazy' },
      );
      if (row) this.mirrorShared(row, now);
    } catch (err) {
      // The delivery's outcome must still be recorded; the next answer or claim corrects the account.
      this.host.log('shared bucket correction failed:', err);
    }
  }

  /** Makes this worker's picture of a shop's bucket the shared row as just read or written (Postgres). */
  mirrorShared(row: SharedBucket, now: number): void {
    this.buckets.set(row.shop_id, {
      seq: this.buckets.get(row.shop_id)?.seq ?? 0,
      available: Number(row.available),
      // The row's time is the database's; the picture's is this worker's, as every `now` here.
      at: Math.min(now, Number(row.at) - this.host.clock.offsetMs),
      restoreRate: Number(row.restore_rate),
      maximumAvailable: Number(row.maximum_available),
      shared: true,
    });
  }
}
