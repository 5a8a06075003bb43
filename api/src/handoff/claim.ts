// The claim: takes due events with a lease, safe with any number of workers in any number of
// processes. On Postgres the due rows are locked with FOR UPDATE SKIP LOCKED (a row another worker
// is claiming is skipped, never waited for) and claims for one shop are serialised by an advisory
// lock, so the per-shop concurrency counted from live leases is exact; on SQLite the write
// transaction is exclusive. The lease's own condition re-checks that each row is due.
import { newId } from '../ids.ts';
import type { Services } from '../core/types.ts';
import { type Db, type SqlParam, tryLockKeys } from '../store/db.ts';
import { insertAttempts } from '../store/tables/attempts.ts';
import { type DueRow, failExhaustedEvent, leaseDueEvents, lockDueEvents } from '../store/tables/events/deliver.ts';
import { claimShopKey, readClaimShops, type SharedBucket, spendSharedBuckets } from '../store/tables/shops.ts';
import type { TriggerVariant } from '../store/tables/endpoints.ts';
import type { ShopRow } from '../store/tables/shops.ts';
import { lookForDue } from './due-look.ts';
import { abandonOrphans, countedAttempts, holdInTx, type Prober } from './hold.ts';
import { isUnavailableShop, SUPPORT_CODES, type SupportCodeKey, shopHoldFor } from './outcomes.ts';
import { type LeaseClock, type Pacer, TRIGGER_COST } from './pace.ts';
import type { PayloadSource } from './payload.ts';

export interface ClaimedEvent extends PayloadSource {
  shop_id: string;
  endpoint_id: string;
  attempt_count: number;
  trigger_variant: TriggerVariant;
  attemptId: string;
  leaseOwner: string;
  /** Sent as the probe of a shop Shopify refuses: if Shopify accepts it, the shop's held events are released. */
  probe: boolean;
  /** A replay (replay_of set): its terminal outcome settles its family's recovered_by (ADR 0420). */
  replay: boolean;
  /** The shop as the claim read it (one read per claim, not one per delivery). */
  shop: ShopRow;
  /** This worker's claim order of the call (pacing). */
  seq: number;
}

/** What the claim needs of its worker. */
export interface ClaimHost {
  readonly services: Services;
  readonly owner: string;
  readonly stats: { reclaimedLeases: number; claimTransactions: number };
  readonly pacer: Pacer;
  readonly clock: LeaseClock;
  readonly prober: Prober;
  /** This process's deliveries in flight per shop. */
  readonly inflightByShop: ReadonlyMap<string, number>;
}

/** One claim's times and limit, and what it leaves behind for after its transaction. */
interface ClaimRun {
  host: ClaimHost;
  now: number;
  /** Lease times (written and compared) are on the store's clock; next_attempt_at is not. */
  leaseNow: number;
  limit: number;
  /** Shops whose shared account the claim read (Postgres), to be looked at again when they have points. */
  sharedShops: string[];
  /** Calls counted in flight by the claim (pacing), taken back if its transaction fails. */
  pendingSeqs: [shop: string, seq: number][];
}

/** The claim's shops as its transaction read them. */
interface ClaimShops {
  /** Live leases per shop (every worker's), counting those the claim chooses. */
  busy: Map<string, number>;
  /** Live leases per shop as read, before the claim chose any: the calls in flight. */
  inFlight: ReadonlyMap<string, number>;
  shared: Map<string, SharedBucket>;
  rows: Map<string, ShopRow>;
  /** Calls each shop's bucket allows now (pacing); shops Shopify has not described are not limited. */
  points: Map<string, number>;
  /** Why a shop's events are held instead of sent (SHOP_HOLDS), and its probe. */
  holdFor: Map<string, { support: SupportCodeKey; probe: string | null }>;
}

/** Claims up to `limit` due events (queued and due, or delivering with an expired lease). */
export async function claimDue(host: ClaimHost, limit: number): Promise<ClaimedEvent[]> {
  const { db, config } = host.services;
  const now = host.services.now();
  await host.clock.refresh(now);
  await host.prober.startDueProbes(now);
  const leaseNow = now + host.clock.offsetMs;
  // How many more calls this worker may start for a shop now: its concurrency left (this
  // process's deliveries) and, once Shopify has described the shop's bucket, the whole calls
  // the bucket holds by this worker's account (pacing, ADR 0200).
  const room = (shop: string) =>
    Math.min(config.worker.concurrencyPerShop - (host.inflightByShop.get(shop) ?? 0), host.pacer.callsFor(shop, now));
  const skip = host.pacer.shopsToSkip(now, host.inflightByShop.keys(), room);
  // A shop left out for pacing is looked at again when its points are back.
  for (const shop of skip) host.pacer.wakeWhenReady(shop, now);
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
    { look: Math.min(limit * 4, limit + 64), concurrency: config.worker.concurrencyPerShop, skip, room },
  );
  if (preliminary.length === 0) return [];
  host.stats.claimTransactions++;
  const run: ClaimRun = { host, now, leaseNow, limit, sharedShops: [], pendingSeqs: [] };
  const claimed = await db
    .tx((tx) => claimInTx(run, tx, preliminary))
    .catch((err: unknown) => {
      for (const [shop, seq] of run.pendingSeqs) host.pacer.endCall(shop, seq);
      throw err;
    });
  // A shop its shared account left calls out of (other workers may have taken its points) is
  // looked at again when it has points.
  for (const id of run.sharedShops) host.pacer.wakeWhenReady(id, now);
  return claimed;
}

async function claimInTx(run: ClaimRun, tx: Db, preliminary: DueRow[]): Promise<ClaimedEvent[]> {
  let candidates = preliminary;
  if (tx.dialect === 'postgres') {
    // Lock the rows the look found that are still due; a row another worker is claiming is
    // skipped, never waited for.
    candidates = await lockDueEvents(
      tx,
      preliminary.map((r) => r.id),
      run.now,
      run.leaseNow,
    );
    // Another worker claiming for the same shop right now: leave that shop to it this round.
    const mine = await tryLockKeys(
      tx,
      candidates.map((r) => claimShopKey(r.shop_id)),
    );
    candidates = candidates.filter((r) => mine.has(claimShopKey(r.shop_id)));
    if (candidates.length === 0) return [];
  }
  const shops = await readShops(run, tx, [...new Set(candidates.map((r) => r.shop_id))]);
  const { chosen, probes } = await choose(run, tx, candidates, shops);
  if (chosen.length === 0) return [];
  return lease(run, tx, chosen, probes, shops);
}

/**
 * Live leases per shop (every worker's), the shop itself and, on Postgres, its shared bucket
 * account (ADR 0200, "Pacing"), in one round trip, read under the claim locks taken above. SQLite
 * is one process: the account in memory is the whole one.
 */
async function readShops(run: ClaimRun, tx: Db, shopIds: string[]): Promise<ClaimShops> {
  const { pacer } = run.host;
  const shops = await readClaimShops<ShopRow>(tx, shopIds, run.leaseNow, tx.dialect === 'postgres');
  const inFlight = new Map(shops.map((r) => [r.id, Number(r.busy)]));
  const busy = new Map(inFlight);
  const shared = new Map<string, SharedBucket>();
  const rows = new Map<string, ShopRow>();
  for (const { busy: _b, ...row } of shops) {
    const {
      bucket_available: available,
      bucket_at: at,
      bucket_restore_rate: restoreRate,
      bucket_maximum_available: maximumAvailable,
      ...shop
    } = row;
    rows.set(shop.id, shop as ShopRow);
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
    pacer.mirrorShared(row, run.now);
    run.sharedShops.push(row.shop_id);
  }
  // A shared account holds no more than the bucket beside the calls in flight (spendSharedBuckets).
  const points = new Map(
    shopIds.map((id) => {
      const row = shared.get(id);
      const calls = pacer.callsFor(id, run.now);
      if (!row) return [id, calls];
      const beside = (row.maximum_available - (inFlight.get(id) ?? 0) * TRIGGER_COST) / TRIGGER_COST;
      return [id, Math.min(calls, Math.floor(beside))];
    }),
  );
  const holdFor = new Map<string, { support: SupportCodeKey; probe: string | null }>();
  for (const s of shops) {
    const hold = shopHoldFor(s.connection_status);
    if (hold)
      holdFor.set(s.id, {
        support: hold.support,
        probe: isUnavailableShop(s.connection_status) ? s.probe_event_id : null,
      });
  }
  return { busy, inFlight, shared, rows, points, holdFor };
}

/**
 * The candidates to send, in order, up to the limit: a held shop's events are held (its probe
 * sent), a poison event past its schedule fails, and no shop gets more than its concurrency and
 * its bucket's points.
 */
async function choose(
  run: ClaimRun,
  tx: Db,
  candidates: DueRow[],
  { busy, points, holdFor }: ClaimShops,
): Promise<{ chosen: DueRow[]; probes: Set<string> }> {
  const { config } = run.host.services;
  const { now, leaseNow } = run;
  const chosen: DueRow[] = [];
  const probes = new Set<string>();
  for (const row of candidates) {
    if (chosen.length >= run.limit) break;
    const reclaimed = row.state === 'delivering';
    const hold = holdFor.get(row.shop_id);
    if (hold && hold.probe === row.id) probes.add(row.id);
    else if (hold) {
      await holdInTx(tx, { eventId: row.id, support: hold.support, now, leaseNow, reclaimed });
      continue;
    }
    if (
      reclaimed &&
      row.attempt_count >= config.worker.maxAttempts &&
      (await countedAttempts(tx, row)) >= config.worker.maxAttempts
    ) {
      // A crash on every try (a poison event) must not loop forever: the schedule bounds it too.
      await failExhaustedEvent(tx, { id: row.id, code: SUPPORT_CODES.exhausted, now, leaseNow });
      await abandonOrphans(tx, [row.id], now);
      continue;
    }
    if ((busy.get(row.shop_id) ?? 0) >= config.worker.concurrencyPerShop) continue;
    if ((points.get(row.shop_id) ?? 0) < 1 && !probes.has(row.id)) continue;
    busy.set(row.shop_id, (busy.get(row.shop_id) ?? 0) + 1);
    points.set(row.shop_id, (points.get(row.shop_id) ?? 0) - 1);
    chosen.push(row);
  }
  return { chosen, probes };
}

/**
 * Takes the calls' points from shared accounts (a shop whose account refuses them sends none),
 * leases the rows in one statement, closes the attempts of re-claimed leases and opens one attempt
 * per call. The lease owner names this worker and this claim, so only this claim can record the
 * outcome.
 */
async function lease(
  run: ClaimRun,
  tx: Db,
  picked: DueRow[],
  probes: Set<string>,
  shops: ClaimShops,
): Promise<ClaimedEvent[]> {
  const { host, now } = run;
  const chosen = shops.shared.size ? await spendShared(run, tx, picked, probes, shops) : picked;
  if (chosen.length === 0) return [];
  const leaseOwner = `${host.owner}/${newId('request').slice(4)}`;
  const updated = await leaseDueEvents(tx, {
    ids: chosen.map((r) => r.id),
    leaseOwner,
    leaseExpiresAt: run.leaseNow + host.services.config.worker.leaseMs,
    now,
    leaseNow: run.leaseNow,
  });
  if (updated.length === 0) return [];
  const byId = new Map(updated.map((r) => [r.id, r]));
  const reclaimed = chosen.filter((r) => r.state === 'delivering' && byId.has(r.id)).map((r) => r.id);
  if (reclaimed.length) {
    host.stats.reclaimedLeases += reclaimed.length;
    await abandonOrphans(tx, reclaimed, now);
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
    const { replay_of: _r, is_test: _t, ...payload } = ev;
    // In flight from now on for pacing (Pacer.startCall).
    const seq = host.pacer.startCall(ev.shop_id, now, shops.shared.has(ev.shop_id));
    run.pendingSeqs.push([ev.shop_id, seq]);
    out.push({
      ...payload,
      trigger_variant: ev.trigger_variant as TriggerVariant,
      attempt_count: Number(ev.attempt_count),
      attemptId,
      leaseOwner,
      probe: probes.has(ev.id),
      replay: ev.replay_of !== null && ev.replay_of !== undefined,
      seq,
      shop: shops.rows.get(ev.shop_id) as ShopRow,
    });
  }
  await insertAttempts(tx, attemptRows);
  return out;
}

/**
 * The calls' points come out of the shops' shared accounts, refilled to the database clock, before
 * the rows are leased and the claim locks let go: one conditional write for the claim's shops,
 * relative to each row as it is then (an answer's correction written since the claim read it is
 * kept). The claim chose no more calls than the row it read covers, so under the shop's claim lock
 * the write takes them all; should the row no longer cover them, the store refuses and the shop
 * sends none this time (its rows stay due). A probe is sent whatever the account (it asks whether
 * Shopify serves the shop at all) and is not taken from it. Returns the rows to lease.
 */
async function spendShared(
  run: ClaimRun,
  tx: Db,
  picked: readonly DueRow[],
  probes: ReadonlySet<string>,
  { shared, inFlight }: ClaimShops,
): Promise<DueRow[]> {
  const spent = new Map<string, { calls: number; inFlight: number }>();
  for (const ev of picked)
    if (shared.has(ev.shop_id) && !probes.has(ev.id)) {
      const s = spent.get(ev.shop_id) ?? { calls: 0, inFlight: inFlight.get(ev.shop_id) ?? 0 };
      s.calls++;
      spent.set(ev.shop_id, s);
    }
  if (spent.size === 0) return [...picked];
  const { services, clock, pacer } = run.host;
  // Refilled to now, not to the claim's start: the bucket restores while the claim runs (and, when
  // full, the in-flight cap takes out what it cannot).
  const spentNow = services.now();
  const rows = await spendSharedBuckets(tx, spent, spentNow + clock.offsetMs, TRIGGER_COST);
  for (const r of rows) pacer.mirrorShared(r, spentNow);
  const paid = new Set(rows.map((r) => r.shop_id));
  return picked.filter((ev) => !spent.has(ev.shop_id) || paid.has(ev.shop_id) || probes.has(ev.id));
}
