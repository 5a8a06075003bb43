// Shops: the merchant's store, its Admin API token and availability, its Shopify bucket, and Flow's trigger lifecycle per shop.
// Owns: shops, shop_buckets, flow_trigger_lifecycle, flow_lifecycle_signals. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import { type Db, lockKeyHash, PG_LOCK_NAMESPACE, pgArrayLiteral } from '../db.ts';

// shopify app: install, reinstall, uninstall, shop/redact

/** A shop's Admin API token columns (encrypted; the expiring-token columns null for a non-expiring one). */
export interface ShopTokenColumns {
  access_token_enc: string;
  access_token_expires_at: number | null;
  refresh_token_enc: string | null;
  refresh_token_expires_at: number | null;
}

export async function findShopStatusByDomain(
  db: Db,
  domain: string,
): Promise<{ id: string; connection_status: string } | undefined> {
  return db.get<{ id: string; connection_status: string }>('SELECT id, connection_status FROM shops WHERE domain = ?', [
    domain,
  ]);
}

/** The shop whose domain, lower-cased, is `lowerDomain` (privacy webhooks). */
export async function findShopIdByLowerDomain(db: Db, lowerDomain: string): Promise<{ id: string } | undefined> {
  return db.get<{ id: string }>('SELECT id FROM shops WHERE LOWER(domain) = ?', [lowerDomain]);
}

export async function findShopPlan(db: Db, id: string): Promise<{ plan: string } | undefined> {
  return db.get<{ plan: string }>('SELECT plan FROM shops WHERE id = ?', [id]);
}

/** A reinstall: the fresh token stored, the uninstall forgotten. */
export async function reconnectShop(db: Db, id: string, t: ShopTokenColumns, at: number) {
  return db.run(
    `UPDATE shops SET access_token_enc = ?, access_token_expires_at = ?, refresh_token_enc = ?, refresh_token_expires_at = ?,
           installed_at = ?, uninstalled_at = NULL, updated_at = ? WHERE id = ?`,
    [t.access_token_enc, t.access_token_expires_at, t.refresh_token_enc, t.refresh_token_expires_at, at, at, id],
  );
}

/**
 * A first install: a connected shop on the free plan. An upsert that does nothing when the domain is
 * known already (a simultaneous callback of the same first install created it): `changes` 0 says so,
 * and the caller reconnects that row with its token instead.
 */
export async function insertInstalledShop(
  db: Db,
  s: { id: string; domain: string; sandbox: boolean; tokens: ShopTokenColumns; at: number },
) {
  return db.run(
    `INSERT INTO shops (id, domain, plan, sandbox, connection_status, access_token_enc, admin_base_url, created_at, updated_at,
           installed_at, access_token_expires_at, refresh_token_enc, refresh_token_expires_at)
         VALUES (?, ?, 'free', ?, 'connected', ?, NULL, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (domain) DO NOTHING`,
    [
      s.id,
      s.domain,
      s.sandbox ? 1 : 0,
      s.tokens.access_token_enc,
      s.at,
      s.at,
      s.at,
      s.tokens.access_token_expires_at,
      s.tokens.refresh_token_enc,
      s.tokens.refresh_token_expires_at,
    ],
  );
}

/** app/uninstalled: the shop marked uninstalled, its tokens deleted, its probe stopped. */
export async function markShopUninstalled(db: Db, id: string, at: number) {
  return db.run(
    `UPDATE shops SET connection_status = 'uninstalled', access_token_enc = NULL, access_token_expires_at = NULL,
         refresh_token_enc = NULL, refresh_token_expires_at = NULL, uninstalled_at = ?, next_probe_at = NULL,
         probe_event_id = NULL, updated_at = ? WHERE id = ?`,
    [at, at, id],
  );
}

/** shop/redact: the token removed, the shop disconnected. */
export async function disconnectRedactedShop(db: Db, id: string, at: number) {
  return db.run(
    `UPDATE shops SET access_token_enc = NULL, connection_status = 'disconnected', updated_at = ? WHERE id = ?`,
    [at, id],
  );
}

// services/shops: the shop row, creating one, finding and listing them.

export interface ShopRow {
  id: string;
  domain: string;
  plan: string;
  sandbox: number;
  /**
   * `connected`, `disconnected`, `uninstalled`, or a status for which Shopify refused the store
   * (`frozen`, `locked`…: UnavailableShopStatus in handoff/outcomes.ts): its events are held and probed.
   */
  connection_status: string;
  access_token_enc: string | null;
  admin_base_url: string | null;
  created_at: number;
  updated_at: number;
  installed_at: number | null;
  uninstalled_at: number | null;
  access_token_expires_at: number | null;
  refresh_token_enc: string | null;
  refresh_token_expires_at: number | null;
}

/** A new shop row (created_at and updated_at both `row.created_at`). */
export async function insertShop(db: Db, row: ShopRow): Promise<void> {
  await db.run(
    `INSERT INTO shops (id, domain, plan, sandbox, connection_status, access_token_enc, admin_base_url, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.domain,
      row.plan,
      row.sandbox,
      row.connection_status,
      row.access_token_enc,
      row.admin_base_url,
      row.created_at,
      row.updated_at,
    ],
  );
}

/** Every shop in the store, oldest first. */
export async function listShopRows(db: Db): Promise<ShopRow[]> {
  return db.all<ShopRow>('SELECT * FROM shops ORDER BY id');
}

/** One shop by id. */
export async function findShop(db: Db, id: string): Promise<ShopRow | undefined> {
  return db.get<ShopRow>('SELECT * FROM shops WHERE id = ?', [id]);
}

// usage: the columns of a shop that decide its limits (usage/meters.ts resolves them).

/** The columns of `shops` that decide a shop's limits. */
export interface ShopLimitsRow {
  plan: string;
  limits_json: string | null;
  sandbox: number;
}

/** A shop's limit columns, or undefined when there is no such shop. */
export async function findShopLimits(db: Db, shopId: string): Promise<ShopLimitsRow | undefined> {
  return db.get<ShopLimitsRow>('SELECT plan, limits_json, sandbox FROM shops WHERE id = ?', [shopId]);
}

// metrics: shops by connection status, for /metrics gauges.

/** Shops per Shopify connection status (`connected` included). */
export async function countShopsByConnection(db: Db): Promise<{ connection_status: string; n: number }[]> {
  return db.all<{ connection_status: string; n: number }>(
    'SELECT connection_status, COUNT(*) AS n FROM shops GROUP BY connection_status',
  );
}

/** Shops per connection status other than `connected` (their events are held). */
export async function countHeldShops(db: Db): Promise<{ connection_status: string; n: number }[]> {
  return db.all<{ connection_status: string; n: number }>(
    `SELECT connection_status, COUNT(*) AS n FROM shops WHERE connection_status <> 'connected' GROUP BY connection_status`,
  );
}

// handoff: the worker's shop reads, shared buckets, holds and probes, reconnects, token refresh and Flow readiness (api/src/handoff/)

/**
 * The advisory lock key that serialises claims for one shop across worker processes (PostgreSQL,
 * ADR 0600), and that an answer's correction of the shop's shared account waits for.
 */
export const claimShopKey = (shopId: string): string => `claim-shop:${shopId}`;

/** A shop's row in `shop_buckets`: the account of its bucket every worker process shares (Postgres). */
export interface SharedBucket {
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

/** A shop as the claim reads it: its row, its live leases (`busy`), and with `sharing` its shared bucket. */
export type ClaimShop<S> = S & { probe_event_id: string | null; busy: number } & Partial<
    Record<`bucket_${string}`, number | null>
  >;

/**
 * The claim's read of its shops (`S` is the shop row type): every worker's live leases per shop,
 * the shop itself and, with `sharing` (PostgreSQL), its shared bucket account, in one round trip.
 */
export async function readClaimShops<S>(
  tx: Db,
  shopIds: readonly string[],
  leaseNow: number,
  sharing: boolean,
): Promise<ClaimShop<S>[]> {
  const inShops = `(${shopIds.map(() => '?').join(', ')})`;
  return tx.all<ClaimShop<S>>(
    `SELECT s.*,
                (SELECT COUNT(*) FROM events e WHERE e.shop_id = s.id AND e.state = 'delivering' AND e.lease_expires_at >= ?) AS busy
                ${sharing ? `, ${SHARED_BUCKET_COLUMNS}` : ''}
           FROM shops s ${sharing ? 'LEFT JOIN shop_buckets b ON b.shop_id = s.id' : ''} WHERE s.id IN ${inShops}`,
    [leaseNow, ...shopIds],
  );
}

/** A shared account refilled to the time in the statement's parameter (`b`: the row). */
const REFILLED =
  'LEAST(b.maximum_available, b.available + GREATEST(0, CAST(? AS BIGINT) - b.at) * b.restore_rate / 1000)';

/** What the spend may take: the refilled account, and no more than the bucket holds beside the calls in flight (`t`). */
const SPENDABLE = (cost: number) => `LEAST(b.maximum_available - t.in_flight * ${cost}, ${REFILLED})`;

/**
 * Takes `n × cost` points per shop out of the shops' shared accounts (PostgreSQL), refilled to
 * `spentAt` (the database clock when the spend runs), relative to each row as it is then, and
 * only where the account so refilled covers them: one conditional write, so two claims cannot
 * both spend the last points (a spend that waited for another's row lock re-checks the condition
 * on the row it left). Returns the rows spent from; a shop missing from the answer had its spend
 * refused and nothing taken.
 *
 * The account holds at most the bucket's size less the shop's calls in flight (`inFlight`, every
 * worker's live leases): Shopify takes a call's point when the call reaches it, and a bucket that
 * is full until then restores nothing, so each call on its way will still take its point.
 * Refilled to the bucket's size alone, that restore was points handed out twice whenever a full
 * bucket met a slow claim (ADR 0202).
 */
export async function spendSharedBuckets(
  tx: Db,
  spent: ReadonlyMap<string, { calls: number; inFlight: number }>,
  spentAt: number,
  cost: number,
): Promise<SharedBucket[]> {
  return tx.all<SharedBucket>(
    `UPDATE shop_buckets AS b
                SET available = ${SPENDABLE(cost)} - t.n * ${cost},
                    at = GREATEST(b.at, CAST(? AS BIGINT))
               FROM (VALUES ${[...spent].map(() => '(CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS INTEGER))').join(', ')})
                    AS t (shop_id, n, in_flight)
              WHERE b.shop_id = t.shop_id AND ${SPENDABLE(cost)} >= t.n * ${cost}
              RETURNING b.shop_id, b.available, b.at, b.restore_rate, b.maximum_available`,
    [spentAt, spentAt, ...[...spent].flatMap(([id, s]) => [id, s.calls, s.inFlight]), spentAt],
  );
}

/**
 * Lowers a shop's shared account (PostgreSQL; creates it) to what Shopify said (`available`), less
 * `cost` per other live lease of the shop (every worker's, but `eventId`'s), if that is less than
 * the account refilled to `dbNow`. Returns the row as written. It first waits for the shop's claim
 * lock: a claim in progress leases calls Shopify has not counted and this count, at READ
 * COMMITTED, could not see; once the lock is ours they are committed and counted (a statement of
 * its own, since a statement's snapshot is taken before anything in it runs). The leases live
 * before that wait are counted too, whether or not they are still live after it: Shopify's answer
 * is as old as the wait is long, and a call answered and recorded meanwhile may have reached
 * Shopify after it counted (the wait under load is tens to hundreds of milliseconds, and left out
 * of the count those calls were points handed out twice; ADR 0202).
 */
export async function lowerSharedBucket(
  tx: Db,
  b: {
    shopId: string;
    eventId: string;
    available: number;
    restoreRate: number;
    maximumAvailable: number;
    dbNow: number;
    cost: number;
  },
): Promise<SharedBucket | undefined> {
  // One statement: its snapshot, and so the leases it reads, are from before the lock's wait.
  const before = await tx.get<{ ids: string | null }>(
    `SELECT (SELECT string_agg(id, ',') FROM events
                WHERE shop_id = ? AND state = 'delivering' AND lease_expires_at >= ?) AS ids,
            pg_advisory_xact_lock(${PG_LOCK_NAMESPACE}, ?) IS NULL AS locked`,
    [b.shopId, b.dbNow, lockKeyHash(claimShopKey(b.shopId))],
  );
  const liveBefore = before?.ids ? before.ids.split(',') : [];
  return tx.get<SharedBucket>(
    `INSERT INTO shop_buckets AS b (shop_id, available, at, restore_rate, maximum_available)
             VALUES (?, CAST(? AS DOUBLE PRECISION) - ${b.cost} * (SELECT COUNT(*) FROM events
                       WHERE shop_id = ? AND id <> ?
                         AND ((state = 'delivering' AND lease_expires_at >= ?) OR id = ANY(CAST(? AS TEXT[])))),
                     ?, ?, ?)
             ON CONFLICT (shop_id) DO UPDATE SET
               available = LEAST(excluded.available, excluded.maximum_available,
                                 b.available + GREATEST(0, excluded.at - b.at) * b.restore_rate / 1000),
               at = GREATEST(b.at, excluded.at),
               restore_rate = excluded.restore_rate, maximum_available = excluded.maximum_available
             RETURNING shop_id, available, at, restore_rate, maximum_available`,
    [
      b.shopId,
      b.available,
      b.shopId,
      b.eventId,
      b.dbNow,
      pgArrayLiteral(liveBefore),
      b.dbNow,
      b.restoreRate,
      b.maximumAvailable,
    ],
  );
}

/** `IN (…)` of statuses written as literals (constants of the code, never input). */
const inLiterals = (statuses: readonly string[]) => `(${statuses.map((s) => `'${s}'`).join(', ')})`;

/** Shops in one of `statuses` (those Shopify refuses) whose next probe is due by `now`. */
export async function shopsWithProbeDue(db: Db, now: number, statuses: readonly string[]): Promise<{ id: string }[]> {
  return db.all<{ id: string }>(
    `SELECT id FROM shops WHERE next_probe_at IS NOT NULL AND next_probe_at <= ? AND connection_status IN ${inLiterals(statuses)}`,
    [now],
  );
}

/**
 * Moves a shop's due probe to `nextProbeAt`, if it is still due and the shop still in one of
 * `statuses`: the one worker of many whose update changed the row starts the probe. Returns the changes.
 */
export async function takeProbeTurn(
  tx: Db,
  p: { shopId: string; now: number; nextProbeAt: number; statuses: readonly string[] },
): Promise<number> {
  const won = await tx.run(
    `UPDATE shops SET next_probe_at = ?, updated_at = ?
            WHERE id = ? AND next_probe_at <= ? AND connection_status IN ${inLiterals(p.statuses)}`,
    [p.nextProbeAt, p.now, p.shopId, p.now],
  );
  return won.changes;
}

/** Names the shop's probe event (null: none). */
export async function setProbeEvent(tx: Db, shopId: string, eventId: string | null): Promise<void> {
  await tx.run('UPDATE shops SET probe_event_id = ? WHERE id = ?', [eventId, shopId]);
}

/**
 * Marks a shop Shopify refused (UNAVAILABLE_SHOP) with `status` and its next probe time, unless it
 * is disconnected or uninstalled. Returns the changes (0: it was not marked).
 */
export async function markShopUnavailable(
  tx: Db,
  p: { shopId: string; status: string; nextProbeAt: number; now: number },
): Promise<number> {
  const marked = await tx.run(
    `UPDATE shops SET connection_status = ?, next_probe_at = ?, probe_event_id = NULL, updated_at = ?
            WHERE id = ? AND connection_status NOT IN ('disconnected', 'uninstalled')`,
    [p.status, p.nextProbeAt, p.now, p.shopId],
  );
  return marked.changes;
}

/** Disconnects a shop whose token Shopify refused, unless it already is (or is uninstalled). Returns the changes. */
export async function markShopDisconnected(tx: Db, shopId: string, now: number): Promise<number> {
  const first = await tx.run(
    `UPDATE shops SET connection_status = 'disconnected', updated_at = ? WHERE id = ? AND connection_status NOT IN ('disconnected', 'uninstalled')`,
    [now, shopId],
  );
  return first.changes;
}

/** Marks a shop connected (its probe cleared); with `onlyFrom`, only a shop in one of those statuses. Returns the changes. */
export async function markShopConnected(
  tx: Db,
  shopId: string,
  now: number,
  onlyFrom?: readonly string[],
): Promise<number> {
  const from = onlyFrom ? ` AND connection_status IN (${onlyFrom.map(() => '?').join(', ')})` : '';
  const marked = await tx.run(
    `UPDATE shops SET connection_status = 'connected', next_probe_at = NULL, probe_event_id = NULL, updated_at = ?
      WHERE id = ?${from}`,
    [now, shopId, ...(onlyFrom ?? [])],
  );
  return marked.changes;
}

/** A shop's domain and connection status. */
export async function findShopStatus(
  tx: Db,
  shopId: string,
): Promise<{ domain: string; connection_status: string } | undefined> {
  return tx.get<{ domain: string; connection_status: string }>(
    'SELECT domain, connection_status FROM shops WHERE id = ?',
    [shopId],
  );
}

/** Whether a shop other than `shopId` has `domain`. */
export async function domainTakenByOther(tx: Db, domain: string, shopId: string): Promise<boolean> {
  return (await tx.get('SELECT id FROM shops WHERE domain = ? AND id <> ?', [domain, shopId])) !== undefined;
}

/** Sets a shop's domain. */
export async function setShopDomain(tx: Db, shopId: string, domain: string, now: number): Promise<void> {
  await tx.run('UPDATE shops SET domain = ?, updated_at = ? WHERE id = ?', [domain, now, shopId]);
}

/** Stores a shop's (encrypted) Admin API token. */
export async function setShopAccessToken(tx: Db, shopId: string, accessTokenEnc: string, now: number): Promise<void> {
  await tx.run(`UPDATE shops SET access_token_enc = ?, updated_at = ? WHERE id = ?`, [accessTokenEnc, now, shopId]);
}

/**
 * Stores a refreshed (encrypted) token pair, if the shop's refresh token is still `usedRefreshEnc`:
 * across processes the first refresh is kept.
 */
export async function storeRefreshedToken(
  db: Db,
  t: {
    shopId: string;
    usedRefreshEnc: string;
    accessTokenEnc: string;
    accessTokenExpiresAt: number | null;
    refreshTokenEnc: string | null;
    refreshTokenExpiresAt: number | null;
    now: number;
  },
): Promise<void> {
  await db.run(
    `UPDATE shops SET access_token_enc = ?, access_token_expires_at = ?, refresh_token_enc = ?, refresh_token_expires_at = ?, updated_at = ?
      WHERE id = ? AND refresh_token_enc = ?`,
    [
      t.accessTokenEnc,
      t.accessTokenExpiresAt,
      t.refreshTokenEnc,
      t.refreshTokenExpiresAt,
      t.now,
      t.shopId,
      t.usedRefreshEnc,
    ],
  );
}

/** A shop's whole row (`S`, the shop row type). */
export async function readShopRow<S>(db: Db, shopId: string): Promise<S | undefined> {
  return db.get<S>('SELECT * FROM shops WHERE id = ?', [shopId]);
}

/** A Flow trigger lifecycle signal's row, as stored. */
export interface LifecycleSignalRow {
  trigger_handle: string;
  has_enabled_flow: number;
  signal_at: number | string;
}

/**
 * Stores a lifecycle signal unless a newer one for the same shop and trigger is stored, and keeps
 * it in the history either way (once: Flow retrying a callback adds nothing), in one
 * transaction. Returns the changes to the newest signal (1: applied).
 */
export async function upsertLifecycleSignal(
  db: Db,
  s: { id: string; shopDomain: string; handle: string; hasEnabledFlow: boolean; signalAt: number; now: number },
): Promise<number> {
  return db.tx(async (tx) => {
    const r = await tx.run(
      `INSERT INTO flow_trigger_lifecycle (shop_domain, trigger_handle, has_enabled_flow, signal_at, received_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (shop_domain, trigger_handle) DO UPDATE SET
         has_enabled_flow = excluded.has_enabled_flow, signal_at = excluded.signal_at, received_at = excluded.received_at
       WHERE flow_trigger_lifecycle.signal_at < excluded.signal_at`,
      [s.shopDomain, s.handle, s.hasEnabledFlow ? 1 : 0, s.signalAt, s.now],
    );
    await tx.run(
      `INSERT INTO flow_lifecycle_signals (id, shop_domain, trigger_handle, has_enabled_flow, signal_at, received_at, applied)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (shop_domain, trigger_handle, signal_at, has_enabled_flow) DO NOTHING`,
      [s.id, s.shopDomain, s.handle, s.hasEnabledFlow ? 1 : 0, s.signalAt, s.now, r.changes > 0 ? 1 : 0],
    );
    return r.changes;
  });
}

/** The newest lifecycle signal of one trigger in a shop. */
export async function findLifecycleSignal(
  db: Db,
  shopDomain: string,
  handle: string,
): Promise<Omit<LifecycleSignalRow, 'trigger_handle'> | undefined> {
  return db.get<{ has_enabled_flow: number; signal_at: number | string }>(
    'SELECT has_enabled_flow, signal_at FROM flow_trigger_lifecycle WHERE shop_domain = ? AND trigger_handle = ?',
    [shopDomain, handle],
  );
}

/**
 * The lifecycle signal that was a trigger's readiness at `at`: the newest, as Flow dated it, of
 * those Flowport had received by then (flow_lifecycle_signals keeps every one).
 */
export async function findLifecycleSignalAt(
  db: Db,
  shopDomain: string,
  handle: string,
  at: number,
): Promise<Omit<LifecycleSignalRow, 'trigger_handle'> | undefined> {
  return db.get<{ has_enabled_flow: number; signal_at: number | string }>(
    `SELECT has_enabled_flow, signal_at FROM flow_lifecycle_signals
      WHERE shop_domain = ? AND trigger_handle = ? AND received_at <= ? ORDER BY signal_at DESC, id DESC LIMIT 1`,
    [shopDomain, handle, at],
  );
}

/**
 * findLifecycleSignalAt for several times in ONE statement (a receipts page's events): the signal
 * each time saw, by time (times without one absent).
 */
export async function findLifecycleSignalsAt(
  db: Db,
  shopDomain: string,
  handle: string,
  ats: readonly number[],
): Promise<Map<number, Omit<LifecycleSignalRow, 'trigger_handle'>>> {
  const times = [...new Set(ats)];
  if (times.length === 0) return new Map();
  const rows = await db.all<{ at: number | string; has_enabled_flow: number; signal_at: number | string }>(
    `SELECT k.column1 AS at, s.has_enabled_flow, s.signal_at
       FROM (VALUES ${times.map(() => '(CAST(? AS BIGINT))').join(', ')}) AS k
       JOIN flow_lifecycle_signals s ON s.id = (
         SELECT id FROM flow_lifecycle_signals
          WHERE shop_domain = ? AND trigger_handle = ? AND received_at <= k.column1 ORDER BY signal_at DESC, id DESC LIMIT 1)`,
    [...times, shopDomain, handle],
  );
  return new Map(rows.map((r) => [Number(r.at), { has_enabled_flow: r.has_enabled_flow, signal_at: r.signal_at }]));
}

/** The newest lifecycle signal of every trigger in a shop. */
export async function listLifecycleSignals(db: Db, shopDomain: string): Promise<LifecycleSignalRow[]> {
  return db.all<LifecycleSignalRow>(
    'SELECT trigger_handle, has_enabled_flow, signal_at FROM flow_trigger_lifecycle WHERE shop_domain = ?',
    [shopDomain],
  );
}
