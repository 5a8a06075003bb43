// The delivery worker: claims due events with a lease, hands each to Shopify
// Flow, records every attempt, and maps the answer to the event's next state.
// At-least-once: a lease that expires mid-delivery (a crashed worker) makes the
// event claimable again; that re-claim is counted as a possible duplicate.
// See docs/adr/0200-handoff-worker.md for the decisions.
import { readinessForDelivery } from './flow-readiness.ts';
import { withFreshToken } from './shop-tokens.ts';
import { type DueRow, lookForDue } from './due-look.ts';
import { newId } from '../ids.ts';
import type { Services } from '../core/types.ts';
import { type Db, insertMany, pgArrayLiteral, type SqlParam, tryLockKeys } from '../store/db.ts';
import { type Batch, GroupCommitter } from '../store/committer.ts';
import type { TriggerVariant } from '../store/tables/endpoints.ts';
import type { ShopRow } from '../store/tables/shops.ts';
import { callFlowTriggerReceive, type FlowCallResult, graphqlUrl } from './flow-client.ts';
import { releaseShopInTx, sweepRetention } from './lifecycle.ts';
import {
  type AttemptOutcome,
  type Classified,
  classifyFlowResult,
  HELD_ATTEMPT_OUTCOMES,
  isUnavailableShop,
  retryDelayMs,
  retryPolicyOf,
  SUPPORT_CODES,
  type SupportCodeKey,
  shopHoldFor,
  UNAVAILABLE_SHOP_STATUSES,
} from './outcomes.ts';
import {
  buildFlowPayload,
  FLOW_PAYLOAD_LIMIT_BYTES,
  PayloadBuildError,
  type PayloadSource,
  payloadBytes,
  TRIGGER_HANDLES,
} from './payload.ts';

/** What an abandoned attempt (its worker died mid-call) says. */
const ABANDONED_NOTE = 'lease expired before the outcome was recorded; Flow may have received this call';

/** How often a worker re-measures the store clock's offset from its own (Postgres). */
const LEASE_CLOCK_REFRESH_MS = 60_000;

/** How often a worker looks for shops Shopify refuses (UNAVAILABLE_SHOP) whose probe is due. */
const PROBE_CHECK_MS = 1_000;

/** `IN (…)` of the shop statuses whose events are held and probed (UNAVAILABLE_SHOP's keys). */
const UNAVAILABLE_IN = `(${UNAVAILABLE_SHOP_STATUSES.map((s) => `'${s}'`).join(', ')})`;

interface ClaimedEvent extends PayloadSource {
  shop_id: string;
  endpoint_id: string;
  attempt_count: number;
  trigger_variant: TriggerVariant;
  attemptId: string;
  leaseOwner: string;
  /** Sent as the probe of a shop Shopify refuses: if Shopify accepts it, the shop's held events are released. */
  probe: boolean;
  /** The shop as the claim read it (one read per claim, not one per delivery). */
  shop: ShopRow;
  /** This worker's claim order of the call (pacing). */
  seq: number;
}

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

/** A shop's row in `shop_buckets`: the account of its bucket every worker process shares (Postgres). */
interface SharedBucket {
  shop_id: string;
  available: number;
  /** On the database's clock. */
  at: number;
  restore_rate: number;
  maximum_available: number;
}

/** Columns of `shop_buckets` a claim reads with the shop, prefixed so they do not mix with the shop's. */
const SHARED_BUCKET_COLUMNS =
  'b.available AS bucket_available, b.at AS bucket_at, b.restore_rate AS bucket_restore_rate, ' +
  'b.maximum_available AS bucket_maximum_available';

/**
 * How often at most a worker writes a shop's shared account from answers that show the bucket low
 * (THROTTLED answers, and a low answer for a shop it knows no shared account of, are always
 * written): claims keep the account between answers, so an answer only catches what they cannot
 * know (another app's calls), and writing every one would be a write per call.
 */
const SHARED_CORRECTION_MS = 100;

/** What one flowTriggerReceive call costs (Shopify charges 1 point; REFERENCE-FACTS.md). */
export const TRIGGER_COST = 1;

/** Restore time kept back in a shop's bucket account for the clocks' difference (`callsFor`). */
const CLOCK_RESERVE_MS = 10;

/** How long a shop's bucket account is kept once it is full and unused (bounds the map). */
const BUCKET_FORGET_MS = 10 * 60_000;

/**
 * One event's outcome of the common kinds (a final outcome other than a probe's release, or a
 * plain retry), as its row and its attempt's row are written on PostgreSQL with the rest of
 * its group commit (`writeOutcomes`).
 */
interface BatchedOutcome {
  event: {
    id: string;
    leaseOwner: string;
    state: string;
    supportCode: string;
    errorCode: string | null;
    nextAttemptAt: number | null;
    /** A final outcome sets `delivered_at` (null unless delivered); a retry leaves it as it is. */
    final: boolean;
    deliveredAt: number | null;
    updatedAt: number;
    maybeRan: number;
  };
  attempt: {
    id: string;
    finishedAt: number;
    durationMs: number;
    outcome: string;
    httpStatus: number | null;
    errorCode: string | null;
    flowResponse: string;
  };
}

/** The batch scratch key of the outcomes waiting for `writeOutcomes`. */
const BATCHED_OUTCOMES = 'handoff-outcomes';

/**
 * The outcomes of this group commit still to be written (PostgreSQL): the first call registers
 * one `writeOutcomes` before the commit.
 */
function batchedOutcomes(batch: Batch): BatchedOutcome[] {
  let rows = batch.scratch.get(BATCHED_OUTCOMES) as BatchedOutcome[] | undefined;
  if (!rows) {
    const r: BatchedOutcome[] = [];
    rows = r;
    batch.scratch.set(BATCHED_OUTCOMES, r);
    batch.beforeCommit((tx) => writeOutcomes(tx, r));
  }
  return rows;
}

/**
 * Writes and empties `rows` (PostgreSQL): one `UPDATE events` and one `UPDATE attempts`, each
 * given one array per column, whatever the count; each statement is a round trip, and a delivery
 * cost two before. Per row the same as one event's own statements (`record`): a lost lease is not
 * overwritten, and the event rows come before the attempts, as in a re-claim. Each statement takes
 * its rows in id order (PostgreSQL's plan is a nested loop driven by the unnest, one index look-up
 * per row), so two batches that share rows (a lease taken over while its first holder records)
 * lock them in the same order, not each in its own outcomes' finishing order.
 */
async function writeOutcomes(tx: Db, rows: BatchedOutcome[]): Promise<void> {
  if (rows.length === 0) return;
  const events = rows.map((r) => r.event).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const attempts = rows.map((r) => r.attempt).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  rows.length = 0;
  const col = <T>(list: readonly T[], f: (row: T) => SqlParam) => pgArrayLiteral(list.map(f));
  await tx.run(
    `UPDATE events AS e SET state = v.state, support_code = v.support_code, error_code = v.error_code,
       lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = v.next_attempt_at,
       delivered_at = CASE WHEN v.final = 1 THEN v.delivered_at ELSE e.delivered_at END, updated_at = v.updated_at,
       possible_duplicate_deliveries = e.possible_duplicate_deliveries + v.maybe_ran
     FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::integer[], ?::bigint[],
                 ?::bigint[], ?::integer[])
       AS v (id, lease_owner, state, support_code, error_code, next_attempt_at, final, delivered_at, updated_at, maybe_ran)
     WHERE e.id = v.id AND e.lease_owner = v.lease_owner`,
    [
      col(events, (e) => e.id),
      col(events, (e) => e.leaseOwner),
      col(events, (e) => e.state),
      col(events, (e) => e.supportCode),
      col(events, (e) => e.errorCode),
      col(events, (e) => e.nextAttemptAt),
      col(events, (e) => (e.final ? 1 : 0)),
      col(events, (e) => e.deliveredAt),
      col(events, (e) => e.updatedAt),
      col(events, (e) => e.maybeRan),
    ],
  );
  await tx.run(
    `UPDATE attempts AS a SET finished_at = v.finished_at, duration_ms = v.duration_ms, outcome = v.outcome,
       http_status = v.http_status, error_code = v.error_code, flow_response = v.flow_response
     FROM unnest(?::text[], ?::bigint[], ?::integer[], ?::text[], ?::integer[], ?::text[], ?::text[])
       AS v (id, finished_at, duration_ms, outcome, http_status, error_code, flow_response)
     WHERE a.id = v.id`,
    [
      col(attempts, (a) => a.id),
      col(attempts, (a) => a.finishedAt),
      col(attempts, (a) => a.durationMs),
      col(attempts, (a) => a.outcome),
      col(attempts, (a) => a.httpStatus),
      col(attempts, (a) => a.errorCode),
      col(attempts, (a) => a.flowResponse),
    ],
  );
}

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
  private readonly options: WorkerOptions;
  private readonly inflight = new Set<Promise<void>>();
  /** This process's deliveries in flight per shop: a lower bound of the shop's live leases. */
  private readonly inflightByShop = new Map<string, number>();
  /** Group commit of delivery outcomes. */
  private readonly recorder: GroupCommitter;
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
  /**
   * The store's clock minus this process's (Postgres; 0 on SQLite, one machine). Leases are a
   * promise between workers on different machines, so they are written and judged by the one
   * clock all workers share: a worker whose clock runs ahead must not take over calls still in
   * flight (Flow would run them twice), one that runs behind must not recover late.
   */
  private leaseClockOffsetMs = 0;
  private leaseClockCheckedAt = Number.NEGATIVE_INFINITY;
  private probesCheckedAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private pumping = false;
  private again = false;
  private stopped = true;

  constructor(services: Services, options: WorkerOptions) {
    this.services = services;
    this.options = options;
    this.companions = options.companions ?? [];
    this.recorder = new GroupCommitter(services.db, {
      maxBatch: 128,
      ...(services.metrics ? { observe: services.metrics.committerObserver('handoff') } : {}),
    });
  }

  get inFlight(): number {
    return this.inflight.size;
  }

  /** Shops this process is pausing for Shopify's throttling right now (/metrics). */
  throttledShops(): number {
    const now = this.services.now();
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
  private callsFor(shopId: string, now: number): number {
    const b = this.buckets.get(shopId);
    const reserve = b ? (b.restoreRate * CLOCK_RESERVE_MS) / 1000 : 0;
    return Math.floor((this.pointsFor(shopId, now) - reserve) / TRIGGER_COST);
  }

  /** When the shop may be called again (its pause over and a call's points back), or `now`. */
  private readyAt(shopId: string, now: number): number {
    let at = Math.max(now, this.shopPausedUntil.get(shopId) ?? 0);
    const b = this.buckets.get(shopId);
    if (b && b.restoreRate > 0) {
      const missing = TRIGGER_COST + (b.restoreRate * CLOCK_RESERVE_MS) / 1000 - this.pointsFor(shopId, now);
      if (missing > 0) at = Math.max(at, now + Math.ceil((missing / b.restoreRate) * 1000));
    }
    return at;
  }

  /** Kicks the worker at `at` (the earliest of the wake-ups asked for). */
  private wakeUpAt(at: number): void {
    if (this.stopped || at >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.wakeAt = Number.POSITIVE_INFINITY;
        this.kick();
      },
      Math.max(0, at - this.services.now()),
    );
  }

  /** Started and stopped with the worker (the bulk replay runner, wired in api/src/runtime.ts). */
  private readonly companions: readonly WorkerCompanion[];

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
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
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
        for (const ev of batch) {
          this.inflightByShop.set(ev.shop_id, (this.inflightByShop.get(ev.shop_id) ?? 0) + 1);
          // ev.seq is already in inflightSeqs: the claim put it there when it took the call's point.
          const p: Promise<void> = this.deliver(ev)
            .catch((err) => this.log('delivery failed unexpectedly:', err))
            .finally(() => {
              this.inflight.delete(p);
              const left = (this.inflightByShop.get(ev.shop_id) ?? 1) - 1;
              if (left > 0) this.inflightByShop.set(ev.shop_id, left);
              else this.inflightByShop.delete(ev.shop_id);
              const seqs = this.inflightSeqs.get(ev.shop_id);
              seqs?.delete(ev.seq);
              if (seqs?.size === 0) this.inflightSeqs.delete(ev.shop_id);
              this.kick();
            });
          this.inflight.add(p);
        }
        if (batch.length === free) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      this.log('worker claim failed:', err);
    } finally {
      this.pumping = false;
    }
    if (!this.stopped) this.timer = setTimeout(() => this.kick(), this.services.config.worker.pollIntervalMs);
  }

  /** Re-measures the store clock's offset now and then (clocks drift slowly). */
  private async refreshLeaseClock(now: number): Promise<void> {
    const { db } = this.services;
    if (db.dialect !== 'postgres' || now - this.leaseClockCheckedAt < LEASE_CLOCK_REFRESH_MS) return;
    const before = Date.now();
    const row = await db.get<{ ms: number | string }>(
      'SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint AS ms',
    );
    const local = this.services.now() - (Date.now() - before) / 2;
    if (row) this.leaseClockOffsetMs = Math.round(Number(row.ms) - local);
    this.leaseClockCheckedAt = now;
  }

  /**
   * Claims up to `limit` due events (queued and due, or delivering with an expired lease).
   * Safe with any number of workers in any number of processes: on Postgres the due rows
   * are locked with FOR UPDATE SKIP LOCKED (a row another worker is claiming is skipped,
   * never waited for) and claims for one shop are serialised by an advisory lock, so the
   * per-shop concurrency counted from live leases is exact; on SQLite the write
   * transaction is exclusive. The UPDATE's own condition re-checks that the row is due.
   */
  async claim(limit: number): Promise<ClaimedEvent[]> {
    const { db, config } = this.services;
    const now = this.services.now();
    await this.refreshLeaseClock(now);
    await this.startDueProbes(now);
    // Lease times (written and compared) are on the store's clock; next_attempt_at is not.
    const leaseNow = now + this.leaseClockOffsetMs;
    // How many more calls this worker may start for a shop now: its concurrency left (this
    // process's deliveries) and, once Shopify has described the shop's bucket, the whole calls
    // the bucket holds by this worker's account (pacing, ADR 0200).
    const room = (shop: string) =>
      Math.min(config.worker.concurrencyPerShop - (this.inflightByShop.get(shop) ?? 0), this.callsFor(shop, now));
    const skip = new Set<string>();
    for (const [shop, until] of this.shopPausedUntil) if (until > now) skip.add(shop);
    for (const shop of this.inflightByShop.keys()) if (room(shop) < 1) skip.add(shop);
    for (const [shop, b] of this.buckets) {
      // An account full for a long while says nothing an answer would not say again: dropped.
      if (now - b.at > BUCKET_FORGET_MS && this.pointsFor(shop, now) >= b.maximumAvailable) {
        this.buckets.delete(shop);
        this.sharedWrittenAt.delete(shop);
      } else if (room(shop) < 1) skip.add(shop);
    }
    // A shop left out for pacing is looked at again when its points are back.
    for (const shop of skip) {
      const at = this.readyAt(shop, now);
      if (at > now) this.wakeUpAt(at);
    }
    const dueWhere = `((state = 'queued' AND next_attempt_at <= ?) OR (state = 'delivering' AND lease_expires_at < ?))`;
    // A cheap look first, outside any transaction: most polls find nothing and open none
    // (ADR 0203). It reads the oldest due rows of all shops together; shops paused or with no room
    // now are passed over, and a shop gives no more rows than this worker can take from it now, so
    // one shop's backlog cannot fill the claim (head-of-line blocking across shops). When the rows
    // passed over filled the look, other shops' due rows may lie behind them: the look then reads
    // shop by shop, at a cost that does not grow with any shop's backlog. On Postgres, shops at
    // their concurrency with every worker's live leases are passed over too (the per-shop check in
    // the transaction stays the exact one).
    const preliminary = await lookForDue(
      db,
      { now, leaseNow },
      {
        look: Math.min(limit * 4, limit + 64),
        concurrency: config.worker.concurrencyPerShop,
        skip,
        room,
      },
    );
    if (preliminary.length === 0) return [];
    this.stats.claimTransactions++;
    // Shops whose shared account the claim read (Postgres), to be looked at again when they have points.
    const sharedShops: string[] = [];
    // Calls counted in flight by the claim below (pacing), taken back if its transaction fails.
    const pendingSeqs: [shop: string, seq: number][] = [];
    const dropPending = () => {
      for (const [shop, seq] of pendingSeqs) {
        const seqs = this.inflightSeqs.get(shop);
        seqs?.delete(seq);
        if (seqs?.size === 0) this.inflightSeqs.delete(shop);
      }
    };
    const claimed = await db
      .tx(async (tx) => {
        let candidates = preliminary;
        if (tx.dialect === 'postgres') {
          // Lock the rows the look found that are still due; a row another worker is claiming is
          // skipped, never waited for.
          candidates = await tx.all<DueRow>(
            `SELECT id, shop_id, state, attempt_count, replay_of, is_test FROM events
            WHERE id IN (${preliminary.map(() => '?').join(', ')}) AND ${dueWhere}
            ORDER BY next_attempt_at FOR UPDATE SKIP LOCKED`,
            [...preliminary.map((r) => r.id), now, leaseNow],
          );
          // Another worker claiming for the same shop right now: leave that shop to it this round.
          const mine = await tryLockKeys(
            tx,
            candidates.map((r) => `claim-shop:${r.shop_id}`),
          );
          candidates = candidates.filter((r) => mine.has(`claim-shop:${r.shop_id}`));
          if (candidates.length === 0) return [];
        }
        const shopIds = [...new Set(candidates.map((r) => r.shop_id))];
        const inShops = `(${shopIds.map(() => '?').join(', ')})`;
        // Postgres: the shops' shared bucket accounts (ADR 0200, "Pacing"), read and written under
        // the claim locks taken above. SQLite is one process: the account in memory is the whole one.
        const sharing = tx.dialect === 'postgres';
        // Live leases per shop (every worker's), the shop itself and its shared account, in one round trip.
        const shops = await tx.all<
          ShopRow & { probe_event_id: string | null; busy: number } & Partial<Record<`bucket_${string}`, number | null>>
        >(
          `SELECT s.*,
                (SELECT COUNT(*) FROM events e WHERE e.shop_id = s.id AND e.state = 'delivering' AND e.lease_expires_at >= ?) AS busy
                ${sharing ? `, ${SHARED_BUCKET_COLUMNS}` : ''}
           FROM shops s ${sharing ? 'LEFT JOIN shop_buckets b ON b.shop_id = s.id' : ''} WHERE s.id IN ${inShops}`,
          [leaseNow, ...shopIds],
        );
        const busy = new Map(shops.map((r) => [r.id, Number(r.busy)]));
        const shared = new Map<string, SharedBucket>();
        const shopRows = new Map<string, ShopRow>();
        for (const { busy: _b, ...row } of shops) {
          const {
            bucket_available: available,
            bucket_at: at,
            bucket_restore_rate: restoreRate,
            bucket_maximum_available: maximumAvailable,
            ...shop
          } = row;
          shopRows.set(shop.id, shop as ShopRow);
          if (available !== null && available !== undefined)
            shared.set(shop.id, {
              shop_id: shop.id,
              available: Number(available),
              at: Number(at),
              restore_rate: Number(restoreRate),
              maximum_available: Number(maximumAvailable),
            });
        }
        // This worker's picture of each shared account is the row now (whatever other workers did to it).
        for (const row of shared.values()) {
          this.mirrorShared(row, now);
          sharedShops.push(row.shop_id);
        }
        // Calls each shop's bucket allows now (pacing); shops Shopify has not described are not limited.
        const points = new Map(shopIds.map((id) => [id, this.callsFor(id, now)]));
        // Why a shop's events are held instead of sent (SHOP_HOLDS), and its probe.
        const holdFor = new Map<string, { support: SupportCodeKey; probe: string | null }>();
        for (const s of shops) {
          const hold = shopHoldFor(s.connection_status);
          if (hold)
            holdFor.set(s.id, {
              support: hold.support,
              probe: isUnavailableShop(s.connection_status) ? s.probe_event_id : null,
            });
        }
        const chosen: DueRow[] = [];
        const probes = new Set<string>();
        for (const row of candidates) {
          if (chosen.length >= limit) break;
          const reclaimed = row.state === 'delivering';
          const hold = holdFor.get(row.shop_id);
          if (hold && hold.probe === row.id) probes.add(row.id);
          else if (hold) {
            await this.holdInTx(tx, row.id, hold.support, now, leaseNow, dueWhere, reclaimed);
            continue;
          }
          if (
            reclaimed &&
            row.attempt_count >= config.worker.maxAttempts &&
            (await this.countedAttempts(tx, row)) >= config.worker.maxAttempts
          ) {
            // A crash on every try (a poison event) must not loop forever: the schedule bounds it too.
            const code = SUPPORT_CODES.exhausted;
            await tx.run(
              `UPDATE events SET state = 'failed', support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
               next_attempt_at = NULL, updated_at = ?, possible_duplicate_deliveries = possible_duplicate_deliveries + 1
             WHERE id = ? AND ${dueWhere}`,
              [code.code, code.errorCode, now, row.id, now, leaseNow],
            );
            await this.abandonOrphans(tx, [row.id], now);
            continue;
          }
          if ((busy.get(row.shop_id) ?? 0) >= config.worker.concurrencyPerShop) continue;
          if ((points.get(row.shop_id) ?? 0) < 1 && !probes.has(row.id)) continue;
          busy.set(row.shop_id, (busy.get(row.shop_id) ?? 0) + 1);
          points.set(row.shop_id, (points.get(row.shop_id) ?? 0) - 1);
          chosen.push(row);
        }
        if (chosen.length === 0) return [];
        // One statement for the whole batch. The lease owner names this worker and this claim, so
        // only this claim can record the outcome; the condition re-checks that each row is still due.
        const leaseOwner = `${this.owner}/${newId('request').slice(4)}`;
        const inChosen = `(${chosen.map(() => '?').join(', ')})`;
        const updated = await tx.all<Omit<ClaimedEvent, 'attemptId' | 'leaseOwner'> & DueRow>(
          `UPDATE events SET state = 'delivering', lease_owner = ?, lease_expires_at = ?, updated_at = ?,
           attempt_count = attempt_count + 1,
           possible_duplicate_deliveries = possible_duplicate_deliveries + CASE WHEN state = 'delivering' THEN 1 ELSE 0 END
         WHERE id IN ${inChosen} AND ${dueWhere}
         RETURNING id, shop_id, endpoint_id, event_type, sender, external_event_id, received_at, body, resource_id,
           attempt_count, replay_of, is_test,
           (SELECT trigger_variant FROM endpoints ep WHERE ep.id = events.endpoint_id) AS trigger_variant`,
          [leaseOwner, leaseNow + config.worker.leaseMs, now, ...chosen.map((r) => r.id), now, leaseNow],
        );
        if (updated.length === 0) return [];
        const byId = new Map(updated.map((r) => [r.id, r]));
        const reclaimed = chosen.filter((r) => r.state === 'delivering' && byId.has(r.id)).map((r) => r.id);
        if (reclaimed.length) {
          this.stats.reclaimedLeases += reclaimed.length;
          await this.abandonOrphans(tx, reclaimed, now);
        }
        // The calls' points come out of the shops' shared accounts, refilled to the database clock,
        // before the claim locks are let go. Relative to the row as it is then: an answer's
        // correction written since the read above is kept, and the calls are taken from it.
        if (shared.size) {
          const spent = new Map<string, number>();
          for (const ev of updated) if (shared.has(ev.shop_id)) spent.set(ev.shop_id, (spent.get(ev.shop_id) ?? 0) + 1);
          if (spent.size) {
            const rows = await tx.all<SharedBucket>(
              `UPDATE shop_buckets AS b
                SET available = LEAST(b.maximum_available, b.available + GREATEST(0, CAST(? AS BIGINT) - b.at) * b.restore_rate / 1000)
                                - t.n * ${TRIGGER_COST},
                    at = GREATEST(b.at, CAST(? AS BIGINT))
               FROM (VALUES ${[...spent].map(() => '(CAST(? AS TEXT), CAST(? AS INTEGER))').join(', ')}) AS t (shop_id, n)
              WHERE b.shop_id = t.shop_id
              RETURNING b.shop_id, b.available, b.at, b.restore_rate, b.maximum_available`,
              [leaseNow, leaseNow, ...[...spent].flat()],
            );
            for (const r of rows) this.mirrorShared(r, now);
          }
        }
        const out: ClaimedEvent[] = [];
        const attemptRows: SqlParam[][] = [];
        for (const row of chosen) {
          const ev = byId.get(row.id);
          if (!ev) continue;
          const attemptId = newId('attempt');
          const first = Number(ev.attempt_count) === 1;
          const trigger = first ? (Number(ev.is_test) ? 'test' : ev.replay_of ? 'replay' : 'initial') : 'automatic';
          attemptRows.push([attemptId, ev.id, ev.shop_id, trigger, now, 'in_progress']);
          const { replay_of: _r, is_test: _t, state: _s, ...payload } = ev;
          const seq = ++this.callSeq;
          if (!shared.has(ev.shop_id)) this.spend(ev.shop_id, now);
          // In flight from now on for pacing: an answer arriving before this call is sent (the claim
          // still waits for its commit) must count it among the calls Shopify has not seen yet, or
          // resetting the account would hand its point out again.
          pendingSeqs.push([ev.shop_id, seq]);
          const seqs = this.inflightSeqs.get(ev.shop_id) ?? new Set<number>();
          seqs.add(seq);
          this.inflightSeqs.set(ev.shop_id, seqs);
          out.push({
            ...payload,
            attempt_count: Number(ev.attempt_count),
            attemptId,
            leaseOwner,
            probe: probes.has(ev.id),
            seq,
            shop: shopRows.get(ev.shop_id) as ShopRow,
          });
        }
        await insertMany(
          tx,
          'attempts',
          ['id', 'event_id', 'shop_id', 'trigger', 'started_at', 'outcome'],
          attemptRows,
        );
        return out;
      })
      .catch((err: unknown) => {
        dropPending();
        throw err;
      });
    // A shop its shared account left calls out of (other workers may have taken its points) is
    // looked at again when it has points.
    for (const id of sharedShops) {
      const at = this.readyAt(id, now);
      if (at > now) this.wakeUpAt(at);
    }
    return claimed;
  }

  /**
   * Shops Shopify refuses (UNAVAILABLE_SHOP) whose probe is due: each gets its next probe time
   * and, unless its last probe is still pending, one held event (the oldest) queued as its probe.
   * The conditional UPDATE lets one worker of many start it.
   */
  private async startDueProbes(now: number): Promise<void> {
    const { db, config } = this.services;
    if (now - this.probesCheckedAt < Math.min(PROBE_CHECK_MS, config.worker.shopProbeIntervalMs)) return;
    this.probesCheckedAt = now;
    const due = await db.all<{ id: string }>(
      `SELECT id FROM shops WHERE next_probe_at IS NOT NULL AND next_probe_at <= ? AND connection_status IN ${UNAVAILABLE_IN}`,
      [now],
    );
    for (const shop of due) {
      await db.tx(async (tx) => {
        const won = await tx.run(
          `UPDATE shops SET next_probe_at = ?, updated_at = ?
            WHERE id = ? AND next_probe_at <= ? AND connection_status IN ${UNAVAILABLE_IN}`,
          [now + config.worker.shopProbeIntervalMs, now, shop.id, now],
        );
        if (won.changes === 0) return;
        // One probe at a time: the last one is still queued (e.g. retrying after a 5xx) or in flight.
        const pending = await tx.get<{ id: string }>(
          `SELECT e.id FROM shops s JOIN events e ON e.id = s.probe_event_id
            WHERE s.id = ? AND e.state IN ('queued', 'delivering')`,
          [shop.id],
        );
        if (pending) return;
        const probe = await tx.get<{ id: string }>(
          `SELECT id FROM events WHERE shop_id = ? AND state = 'held' ORDER BY id LIMIT 1`,
          [shop.id],
        );
        await tx.run('UPDATE shops SET probe_event_id = ? WHERE id = ?', [probe?.id ?? null, shop.id]);
        if (probe) {
          await tx.run(
            `UPDATE events SET state = 'queued', support_code = NULL, error_code = NULL, next_attempt_at = ?, updated_at = ?
              WHERE id = ? AND state = 'held'`,
            [now, now, probe.id],
          );
        }
      });
    }
  }

  private async holdInTx(
    tx: Services['db'],
    eventId: string,
    support: SupportCodeKey,
    now: number,
    leaseNow: number,
    condition: string,
    reclaimed: boolean,
  ): Promise<void> {
    const code = SUPPORT_CODES[support];
    const held = await tx.run(
      `UPDATE events SET state = 'held', support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
         next_attempt_at = NULL, updated_at = ?, possible_duplicate_deliveries = possible_duplicate_deliveries + ?
       WHERE id = ? AND ${condition}`,
      [code.code, code.errorCode, now, reclaimed ? 1 : 0, eventId, now, leaseNow],
    );
    // The dead holder's attempt ends here too, as a re-claim that delivers would end it.
    if (reclaimed && held.changes > 0) await this.abandonOrphans(tx, [eventId], now);
  }

  /**
   * Attempts that count against the retry schedule: all but those Shopify refused for the store
   * (UNAVAILABLE_SHOP), which a long refusal would otherwise pile up on a probed event.
   */
  private async countedAttempts(tx: Services['db'], ev: { id: string; attempt_count: number }): Promise<number> {
    const marks = HELD_ATTEMPT_OUTCOMES.map(() => '?').join(', ');
    const row = await tx.get<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM attempts WHERE event_id = ? AND outcome IN (${marks})`,
      [ev.id, ...HELD_ATTEMPT_OUTCOMES],
    );
    return Number(ev.attempt_count) - Number(row?.n ?? 0);
  }

  /** Closes the in-progress attempts of events whose lease expired (their worker died mid-call). */
  private async abandonOrphans(tx: Services['db'], eventIds: string[], now: number): Promise<void> {
    if (eventIds.length === 0) return;
    await tx.run(
      `UPDATE attempts SET outcome = 'abandoned', finished_at = ?, flow_response = ?
        WHERE event_id IN (${eventIds.map(() => '?').join(', ')}) AND outcome = 'in_progress'`,
      [now, JSON.stringify({ note: ABANDONED_NOTE }), ...eventIds],
    );
  }

  private async deliver(ev: ClaimedEvent): Promise<void> {
    const { db, secrets, config } = this.services;
    const shop = ev.shop;
    let payload: Record<string, unknown>;
    try {
      payload = buildFlowPayload(ev.trigger_variant, ev);
    } catch (err) {
      if (!(err instanceof PayloadBuildError)) throw err;
      return this.record(ev, { kind: 'final', outcome: 'rejected', support: 'rejected' }, null, {
        local_check: err.message,
      });
    }
    const size = payloadBytes(payload);
    if (size > FLOW_PAYLOAD_LIMIT_BYTES) {
      // Flow would refuse it (and charge a call); answer as Flow does without calling.
      return this.record(ev, { kind: 'final', outcome: 'too_large', support: 'too_large' }, null, {
        local_check: `payload is ${size} bytes; Flow accepts at most ${FLOW_PAYLOAD_LIMIT_BYTES}`,
      });
    }
    // Flow said no enabled workflow uses this trigger in this store: calling would start nothing
    // and cost a point. "Unknown" (no callback yet) still calls (ADR 1200).
    const handle = TRIGGER_HANDLES[ev.trigger_variant];
    const readiness = await readinessForDelivery(db, shop.domain, handle);
    if (readiness.enabled === 'no') {
      return this.record(ev, { kind: 'final', outcome: 'no_workflow', support: 'workflow_disabled' }, null, {
        local_check: `Flow's trigger lifecycle callback at ${new Date(readiness.since).toISOString()} said no enabled workflow uses ${handle} in ${shop.domain}; Shopify was not called.`,
        flow_signal_at: new Date(readiness.since).toISOString(),
      });
    }
    const current = await withFreshToken(this.services, shop);
    let token = current.access_token_enc ? secrets.decrypt(current.access_token_enc) : '';
    const result = await callFlowTriggerReceive({
      url: graphqlUrl(this.options.adminBaseUrl(shop), config.shopify.apiVersion),
      accessToken: token,
      handle,
      payload,
      timeoutMs: config.worker.requestTimeoutMs,
    });
    token = '';
    const classified = classifyFlowResult(result);
    await this.pace(ev, result, classified);
    return this.record(ev, classified, result, null);
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
  private async pace(ev: ClaimedEvent, result: FlowCallResult, classified: Classified): Promise<void> {
    let now = this.services.now();
    const shopId = ev.shop_id;
    const status = result.throttleStatus;
    const last = this.buckets.get(shopId);
    const throttled = classified.outcome === 'throttled';
    if (status && status.restoreRate > 0 && Number.isFinite(status.currentlyAvailable)) {
      // Low: below half, or few enough that the calls a shop may have in flight (its concurrency,
      // across all workers) could empty it before another answer said so. A bucket far from empty
      // is not written: the shop's calls are bounded by its concurrency there anyway.
      const lowAt = Math.max(
        status.maximumAvailable / 2,
        2 * this.services.config.worker.concurrencyPerShop * TRIGGER_COST,
      );
      const share =
        this.services.db.dialect === 'postgres' &&
        (throttled ||
          (status.currentlyAvailable < lowAt &&
            (!last?.shared || now - (this.sharedWrittenAt.get(shopId) ?? 0) >= SHARED_CORRECTION_MS)));
      if (share) {
        await this.correctShared(ev, status);
        now = this.services.now();
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
    if (throttled) {
      // A THROTTLED answer although the account said a point was there: another client of the
      // bucket spent it (an app outside Flowport, or, before the shop's account is shared on
      // PostgreSQL, another worker process). Leave it the next points, more each time in a row and with
      // jitter, so the clients sharing a shop's bucket stop calling in step.
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
    const at = this.readyAt(shopId, now);
    if (at > now || throttled) this.services.metrics?.throttles.inc();
    if (at > now) this.wakeUpAt(at);
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
  private async correctShared(ev: ClaimedEvent, status: NonNullable<FlowCallResult['throttleStatus']>): Promise<void> {
    const { db } = this.services;
    const now = this.services.now();
    const dbNow = Math.round(now + this.leaseClockOffsetMs);
    this.sharedWrittenAt.set(ev.shop_id, now);
    try {
      const row = await db.tx(
        (tx) =>
          tx.get<SharedBucket>(
            `INSERT INTO shop_buckets AS b (shop_id, available, at, restore_rate, maximum_available)
             VALUES (?, CAST(? AS DOUBLE PRECISION) - ${TRIGGER_COST} * (SELECT COUNT(*) FROM events
                       WHERE shop_id = ? AND state = 'delivering' AND lease_expires_at >= ? AND id <> ?),
                     ?, ?, ?)
             ON CONFLICT (shop_id) DO UPDATE SET
               available = LEAST(excluded.available, excluded.maximum_available,
                                 b.available + GREATEST(0, excluded.at - b.at) * b.restore_rate / 1000),
               at = GREATEST(b.at, excluded.at),
               restore_rate = excluded.restore_rate, maximum_available = excluded.maximum_available
             RETURNING shop_id, available, at, restore_rate, maximum_available`,
            [
              ev.shop_id,
              status.currentlyAvailable,
              ev.shop_id,
              dbNow,
              ev.id,
              dbNow,
              status.restoreRate,
              status.maximumAvailable,
            ],
          ),
        { durability: 'lazy' },
      );
      if (row) this.mirrorShared(row, now);
    } catch (err) {
      // The delivery's outcome must still be recorded; the next answer or claim corrects the account.
      this.log('shared bucket correction failed:', err);
    }
  }

  /** Makes this worker's picture of a shop's bucket the shared row as just read or written (Postgres). */
  private mirrorShared(row: SharedBucket, now: number): void {
    this.buckets.set(row.shop_id, {
      seq: this.buckets.get(row.shop_id)?.seq ?? 0,
      available: Number(row.available),
      // The row's time is the database's; the picture's is this worker's, as every `now` here.
      at: Math.min(now, Number(row.at) - this.leaseClockOffsetMs),
      restoreRate: Number(row.restore_rate),
      maximumAvailable: Number(row.maximum_available),
      shared: true,
    });
  }

  private async record(
    ev: ClaimedEvent,
    c: Classified,
    result: FlowCallResult | null,
    local: Record<string, unknown> | null,
  ): Promise<void> {
    const { config } = this.services;
    const now = this.services.now();
    const policy = retryPolicyOf(config.worker);
    this.stats.attempts[c.outcome] = (this.stats.attempts[c.outcome] ?? 0) + 1;
    if (c.outcome === 'delivered')
      this.services.metrics?.intakeToFlowSeconds.observe(Math.max(0, now - Number(ev.received_at)) / 1000);
    const summary = result ? result.summary : { http_status: null, ...local };
    const attemptCode = SUPPORT_CODES[c.support];
    // A call that may have reached Flow (timeout, broken connection) is a possible duplicate whatever happens next.
    const maybeRan = c.kind === 'retry' && c.maybeRan ? 1 : 0;
    const durationMs = Math.round(result?.durationMs ?? 0);
    const flowResponse = JSON.stringify(summary);
    // Outcomes finishing together share one transaction (one fsync), like intake's batches.
    // The event row first, then its attempt: the same order as a re-claim, so two
    // transactions never wait on each other's rows in a cycle.
    await this.recorder.submit(async (tx, batch) => {
      let attemptOutcome: string = c.outcome;
      // A retry past the schedule fails the event instead (the attempts are read only near its end).
      const exhausted =
        c.kind === 'retry' &&
        ev.attempt_count >= policy.maxAttempts &&
        (await this.countedAttempts(tx, ev)) >= policy.maxAttempts;
      // PostgreSQL: the common kinds (a final outcome other than a probe's release, a plain retry)
      // are written with the rest of the batch, two statements in all (writeOutcomes). SQLite runs
      // each statement in-process, no round trip: one prepared statement per row is cheaper there.
      const batched = tx.dialect === 'postgres' ? batchedOutcomes(batch) : null;
      if (batched) {
        const attempt = {
          id: ev.attemptId,
          finishedAt: now,
          durationMs,
          outcome: c.outcome,
          httpStatus: result?.httpStatus ?? null,
          errorCode: attemptCode.errorCode,
          flowResponse,
        };
        const event = { id: ev.id, leaseOwner: ev.leaseOwner, updatedAt: now, maybeRan, deliveredAt: null };
        if (c.kind === 'final' && !(ev.probe && result)) {
          const code = SUPPORT_CODES[c.support];
          batched.push({
            event: {
              ...event,
              state: code.state,
              supportCode: code.code,
              errorCode: code.errorCode,
              nextAttemptAt: null,
              final: true,
              deliveredAt: c.outcome === 'delivered' ? now : null,
            },
            attempt,
          });
          return;
        }
        if (c.kind === 'retry' && !exhausted) {
          batched.push({
            event: {
              ...event,
              state: 'queued',
              supportCode: attemptCode.code,
              errorCode: attemptCode.errorCode,
              nextAttemptAt: now + Math.max(retryDelayMs(policy, ev.attempt_count), c.notBeforeMs),
              final: false,
            },
            attempt,
          });
          return;
        }
        // A rare kind: the outcomes before it in the batch are written first, so the batch's
        // statements run in the order its outcomes finished (e.g. a 401 holds the shop's queued
        // events, a retry of the same shop recorded before it among them).
        await writeOutcomes(tx, batched);
      }
      // The event's state is the support code's (SUPPORT_CODES): final, or held for a disconnected shop.
      const setFinal = async (key: SupportCodeKey, delivered: boolean) => {
        const code = SUPPORT_CODES[key];
        await tx.run(
          `UPDATE events SET state = ?, support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
             next_attempt_at = NULL, delivered_at = ?, updated_at = ?,
             possible_duplicate_deliveries = possible_duplicate_deliveries + ? WHERE id = ? AND lease_owner = ?`,
          [code.state, code.code, code.errorCode, delivered ? now : null, now, maybeRan, ev.id, ev.leaseOwner],
        );
      };
      if (c.kind === 'final') {
        await setFinal(c.support, c.outcome === 'delivered');
        // Shopify took a probe's call: the store is available again, so every held event goes back.
        if (ev.probe && result) await releaseShopInTx(tx, ev.shop_id, now, UNAVAILABLE_SHOP_STATUSES);
      } else if (c.kind === 'unavailable') {
        // Shopify refused the store itself (UNAVAILABLE_SHOP): Flow did not run the trigger. The
        // shop is marked (unless a 401 already disconnected it; reconnecting releases everything) and
        // this event and its queued ones are held; the next probe is due one interval from now.
        const marked = await tx.run(
          `UPDATE shops SET connection_status = ?, next_probe_at = ?, probe_event_id = NULL, updated_at = ?
            WHERE id = ? AND connection_status NOT IN ('disconnected', 'uninstalled')`,
          [c.status, now + config.worker.shopProbeIntervalMs, now, ev.shop_id],
        );
        const hold = marked.changes > 0 ? c.support : 'held';
        await setFinal(hold, false);
        const code = SUPPORT_CODES[hold];
        await tx.run(
          `UPDATE events SET state = 'held', support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
           WHERE shop_id = ? AND state = 'queued'`,
          [code.code, code.errorCode, now, ev.shop_id],
        );
      } else if (c.kind === 'revoked') {
        // The first 401 for a shop (in any worker process) disconnects it; the conditional
        // UPDATE decides which one that is. A 401 means Flow did not run the trigger, so
        // every event involved is held (none failed): reconnecting releases them all.
        const first = await tx.run(
          `UPDATE shops SET connection_status = 'disconnected', updated_at = ? WHERE id = ? AND connection_status NOT IN ('disconnected', 'uninstalled')`,
          [now, ev.shop_id],
        );
        if (first.changes === 0) {
          // Another delivery already saw the 401: this event waits with the others.
          await setFinal('held', false);
          attemptOutcome = 'held';
        } else {
          // This event found the revocation: held too, carrying FP-H-AUTH so it says why.
          await setFinal('token_revoked', false);
          const held = SUPPORT_CODES.held;
          await tx.run(
            `UPDATE events SET state = 'held', support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
             WHERE shop_id = ? AND state = 'queued'`,
            [held.code, held.errorCode, now, ev.shop_id],
          );
        }
      } else if (exhausted) {
        await setFinal('exhausted', false);
      } else {
        const delay = Math.max(retryDelayMs(policy, ev.attempt_count), c.notBeforeMs);
        await tx.run(
          `UPDATE events SET state = 'queued', support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
             next_attempt_at = ?, updated_at = ?, possible_duplicate_deliveries = possible_duplicate_deliveries + ?
           WHERE id = ? AND lease_owner = ?`,
          [attemptCode.code, attemptCode.errorCode, now + delay, now, maybeRan, ev.id, ev.leaseOwner],
        );
      }
      await tx.run(
        `UPDATE attempts SET finished_at = ?, duration_ms = ?, outcome = ?, http_status = ?, error_code = ?, flow_response = ?
         WHERE id = ?`,
        [
          now,
          durationMs,
          attemptOutcome,
          result?.httpStatus ?? null,
          attemptCode.errorCode,
          flowResponse,
          ev.attemptId,
        ],
      );
    });
    const log = this.services.log;
    if (log?.isLevelEnabled('info'))
      log.info(
        {
          kind: 'handoff',
          shop_id: ev.shop_id,
          endpoint_id: ev.endpoint_id,
          event_id: ev.id,
          attempt_id: ev.attemptId,
          attempt: ev.attempt_count,
          outcome: c.outcome,
          http_status: result?.httpStatus ?? null,
          support_code: attemptCode.code,
          duration_ms: Math.round((result?.durationMs ?? 0) * 1e3) / 1e3,
        },
        'handoff attempt',
      );
  }
}
