// The audit log: append-only and hash-chained. Each entry stores the previous
// entry's hash and its own hash over a canonical encoding of every column, so
// editing, deleting or reordering a row breaks the chain at that row.
// One global chain (seq 1, 2, 3 …) for the operator, and one chain per shop (shop_seq 1, 2, 3 …
// over the columns the shop may see) that GET /agent/v1/audit shows and a tenant can verify:
// appends are serialized by the store's write transaction (SQLite) or a transaction-scoped
// advisory lock (Postgres).
import { createHash } from 'node:crypto';
import { newId } from '../ids.ts';
import type { Db, SqlParam } from '../store/db.ts';

export const AUDIT_GENESIS_HASH = '0'.repeat(64);
/** Arbitrary constant naming the Postgres advisory lock that serializes appends. */
export const PG_AUDIT_LOCK = 7_202_605_001;

export type AuditOutcome = 'success' | 'refused' | 'failed';

export interface AuditActor {
  grantId?: string | null;
  kind: 'agent' | 'human' | 'system' | 'operator' | 'anonymous';
  name: string;
}

/** The actor of operator commands (`flowport grants create`, `endpoints import-secret` …) run on the host. */
export const OPERATOR_ACTOR: AuditActor = { kind: 'operator', name: 'flowport CLI (host operator)' };

export interface AuditEntry {
  shopId: string | null;
  actor: AuditActor;
  /** Dotted verb, e.g. `grant.create`, `replay.confirm`, `events.list`. */
  action: string;
  targetType?: string | null;
  targetId?: string | null;
  /** `success`, `refused` or `failed` (free text allowed for special cases). */
  outcome: AuditOutcome | (string & {});
  requestId?: string | null;
  /** Safe facts only: never secrets, tokens, payload bodies. */
  details?: Record<string, unknown>;
  /** Milliseconds since epoch; defaults to Date.now(). */
  at?: number;
}

export interface AuditRow {
  seq: number;
  id: string;
  at: number;
  shop_id: string | null;
  actor_grant_id: string | null;
  actor_kind: string;
  actor_name: string;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: string;
  request_id: string | null;
  details_json: string;
  prev_hash: string;
  hash: string;
  /** The shop's own chain (null for entries without a shop). */
  shop_seq: number | null;
  shop_prev_hash: string | null;
  shop_hash: string | null;
}

type HashedFields = Omit<AuditRow, 'hash' | 'shop_seq' | 'shop_prev_hash' | 'shop_hash'>;

/** What both chains hash of an entry besides its position and link (see entryFields). */
type EntryFields = Omit<HashedFields, 'seq' | 'prev_hash'>;

/** What a shop's chain hashes: the columns the shop may see, with its own position and link. */
export type ShopHashedFields = Omit<EntryFields, 'shop_id'> & {
  shop_seq: number;
  shop_id: string;
  shop_prev_hash: string;
};

/**
 * The hash of one entry in its shop's chain: SHA-256 (hex) over the JSON array
 * `["flowport-audit-shop-v1", shop_seq, id, at_ms, shop_id, actor_grant_id, actor_kind,
 * actor_name, action, target_type, target_id, outcome, request_id, details_json, shop_prev_hash]`.
 * Everything in it is in the API's audit entry (at_ms = Date.parse(at), details_json =
 * JSON.stringify(details)), so a shop can recompute it.
 */
export function shopAuditHash(r: ShopHashedFields): string {
  return sha256OfJson(['flowport-audit-shop-v1', Number(r.shop_seq), ...entryFields(r), r.shop_prev_hash]);
}

/** The next link of `shopId`'s chain after its last entry (or the genesis). */
async function lastShopLink(tx: Db, shopId: string): Promise<{ seq: number; hash: string }> {
  const last = await tx.get<{ shop_seq: number; shop_hash: string }>(
    'SELECT shop_seq, shop_hash FROM audit_log WHERE shop_id = ? AND shop_seq IS NOT NULL ORDER BY shop_seq DESC LIMIT 1',
    [shopId],
  );
  return { seq: Number(last?.shop_seq ?? 0), hash: last?.shop_hash ?? AUDIT_GENESIS_HASH };
}

/** The hash of one entry: SHA-256 over a fixed-order JSON array of every column but `hash`. */
export function auditHash(r: HashedFields): string {
  return sha256OfJson([Number(r.seq), ...entryFields(r), r.prev_hash]);
}

/** What both chains hash of an entry, in this order, between its sequence number and the previous hash. */
function entryFields(r: EntryFields): unknown[] {
  return [
    r.id,
    Number(r.at),
    r.shop_id,
    r.actor_grant_id,
    r.actor_kind,
    r.actor_name,
    r.action,
    r.target_type,
    r.target_id,
    r.outcome,
    r.request_id,
    r.details_json,
  ];
}

function sha256OfJson(values: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(values)).digest('hex');
}

/**
 * Appends one entry. Pass the caller's transaction handle to make the entry
 * part of that transaction (it commits or rolls back with the caller's work);
 * pass the plain store to append on its own.
 */
export async function appendAudit(db: Db, entry: AuditEntry): Promise<{ id: string; seq: number; hash: string }> {
  return db.tx(async (tx) => {
    if (tx.dialect === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?)', [PG_AUDIT_LOCK]);
    const last = await tx.get<{ seq: number; hash: string }>(
      'SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1',
    );
    const at = entry.at ?? Date.now();
    const fields: HashedFields = {
      seq: Number(last?.seq ?? 0) + 1,
      id: newId('audit', at),
      at,
      shop_id: entry.shopId,
      actor_grant_id: entry.actor.grantId ?? null,
      actor_kind: entry.actor.kind,
      actor_name: entry.actor.name,
      action: entry.action,
      target_type: entry.targetType ?? null,
      target_id: entry.targetId ?? null,
      outcome: entry.outcome,
      request_id: entry.requestId ?? null,
      details_json: JSON.stringify(entry.details ?? {}),
      prev_hash: last?.hash ?? AUDIT_GENESIS_HASH,
    };
    const hash = auditHash(fields);
    let shop: [number | null, string | null, string | null] = [null, null, null];
    if (fields.shop_id !== null) {
      const prev = await lastShopLink(tx, fields.shop_id);
      const shopFields: ShopHashedFields = {
        ...fields,
        shop_id: fields.shop_id,
        shop_seq: prev.seq + 1,
        shop_prev_hash: prev.hash,
      };
      shop = [shopFields.shop_seq, prev.hash, shopAuditHash(shopFields)];
    }
    const cols = [...Object.keys(fields), 'hash', 'shop_seq', 'shop_prev_hash', 'shop_hash'];
    await tx.run(`INSERT INTO audit_log (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, [
      ...(Object.values(fields) as SqlParam[]),
      hash,
      ...shop,
    ]);
    return { id: fields.id, seq: fields.seq, hash };
  });
}

export interface AuditVerifyResult {
  ok: boolean;
  /** Entries checked (all of them when ok). */
  checked: number;
  lastSeq: number | null;
  /** The first broken link, when not ok. */
  broken?: {
    seq: number;
    id: string | null;
    problem: 'hash_mismatch' | 'prev_hash_mismatch' | 'seq_gap';
    detail: string;
  };
}

/**
 * Walks the whole chain in seq order, in pages, and reports the first broken link:
 * a row whose stored hash does not match its contents (edited), whose prev_hash
 * does not match the previous row's hash (deleted/inserted/reordered), or a gap in seq.
 */
export async function verifyAuditChain(db: Db, options: { pageSize?: number } = {}): Promise<AuditVerifyResult> {
  const pageSize = options.pageSize ?? 5_000;
  let prevHash = AUDIT_GENESIS_HASH;
  let expectedSeq = 1;
  let checked = 0;
  let lastSeq: number | null = null;
  for (;;) {
    const rows = await db.all<AuditRow>('SELECT * FROM audit_log WHERE seq >= ? ORDER BY seq LIMIT ?', [
      expectedSeq,
      pageSize,
    ]);
    if (rows.length === 0) break;
    for (const raw of rows) {
      const row = { ...raw, seq: Number(raw.seq), at: Number(raw.at) };
      const broken = brokenLink(row, expectedSeq, prevHash);
      if (broken) return { ok: false, checked, lastSeq, broken };
      prevHash = row.hash;
      lastSeq = row.seq;
      expectedSeq = row.seq + 1;
      checked++;
    }
  }
  return { ok: true, checked, lastSeq };
}

/** How `row` breaks the chain where entry `expectedSeq` linking to `prevHash` belongs; null when it holds. */
function brokenLink(row: AuditRow, expectedSeq: number, prevHash: string): AuditVerifyResult['broken'] | null {
  const at = `Entry seq ${row.seq} (${row.id})`;
  if (row.seq !== expectedSeq)
    return {
      seq: expectedSeq,
      id: null,
      problem: 'seq_gap',
      detail: `Entry seq ${expectedSeq} is missing (next present entry is seq ${row.seq}, ${row.id}).`,
    };
  if (row.prev_hash !== prevHash)
    return {
      seq: row.seq,
      id: row.id,
      problem: 'prev_hash_mismatch',
      detail: `${at} does not point at the hash of entry seq ${row.seq - 1}.`,
    };
  if (auditHash(row) !== row.hash)
    return {
      seq: row.seq,
      id: row.id,
      problem: 'hash_mismatch',
      detail: `${at} was modified after it was written: its contents no longer match its hash.`,
    };
  return null;
}

/**
 * Chains the entries written before each shop had its own chain (migration 1100), in global
 * order. Runs inside the migration's transaction; entries already chained are left alone.
 */
export async function backfillShopChains(tx: Db): Promise<number> {
  const shops = await tx.all<{ shop_id: string }>(
    'SELECT DISTINCT shop_id FROM audit_log WHERE shop_id IS NOT NULL AND shop_seq IS NULL',
  );
  let n = 0;
  for (const { shop_id: shopId } of shops) {
    let prev = await lastShopLink(tx, shopId);
    const rows = await tx.all<AuditRow>('SELECT * FROM audit_log WHERE shop_id = ? AND shop_seq IS NULL ORDER BY seq', [
      shopId,
    ]);
    for (const r of rows) {
      const fields: ShopHashedFields = {
        ...r,
        at: Number(r.at),
        shop_id: shopId,
        shop_seq: prev.seq + 1,
        shop_prev_hash: prev.hash,
      };
      const hash = shopAuditHash(fields);
      await tx.run('UPDATE audit_log SET shop_seq = ?, shop_prev_hash = ?, shop_hash = ? WHERE seq = ?', [
        fields.shop_seq,
        prev.hash,
        hash,
        Number(r.seq),
      ]);
      prev = { seq: fields.shop_seq, hash };
      n++;
    }
  }
  return n;
}

/** One entry of a shop's chain as GET /agent/v1/audit shows it. */
export interface ShopAuditEntryView {
  id: string;
  seq: number;
  at: string;
  actor: { grant_id: string | null; kind: string; name: string };
  action: string;
  target: { type: string | null; id: string | null };
  outcome: string;
  request_id: string | null;
  details: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/**
 * Checks a run of a shop's entries as the API returns them (any order): each hash matches its
 * contents, and each entry links to the one before it. The run may start anywhere; starting at
 * seq 1, its first entry must link to the genesis hash. What a client (or a test) runs over
 * GET /agent/v1/audit pages; `flowport audit verify --shop` checks the store the same way.
 */
export function verifyShopAuditEntries(shopId: string, entries: readonly ShopAuditEntryView[]): AuditVerifyResult {
  const sorted = [...entries].sort((a, b) => a.seq - b.seq);
  let prev: ShopAuditEntryView | null = null;
  let checked = 0;
  for (const e of sorted) {
    const broken = (problem: 'hash_mismatch' | 'prev_hash_mismatch', detail: string): AuditVerifyResult => ({
      ok: false,
      checked,
      lastSeq: prev?.seq ?? null,
      broken: { seq: e.seq, id: e.id, problem, detail },
    });
    if (prev && e.seq !== prev.seq + 1)
      return {
        ok: false,
        checked,
        lastSeq: prev.seq,
        broken: {
          seq: prev.seq + 1,
          id: null,
          problem: 'seq_gap',
          detail: `Entry ${prev.seq + 1} is missing (next present entry is ${e.seq}, ${e.id}).`,
        },
      };
    const expectedPrev = prev ? prev.hash : e.seq === 1 ? AUDIT_GENESIS_HASH : null;
    if (expectedPrev !== null && e.prev_hash !== expectedPrev)
      return broken('prev_hash_mismatch', `Entry ${e.seq} (${e.id}) does not point at the hash of entry ${e.seq - 1}.`);
    const hash = shopAuditHash({
      shop_seq: e.seq,
      id: e.id,
      at: Date.parse(e.at),
      shop_id: shopId,
      actor_grant_id: e.actor.grant_id,
      actor_kind: e.actor.kind,
      actor_name: e.actor.name,
      action: e.action,
      target_type: e.target.type,
      target_id: e.target.id,
      outcome: e.outcome,
      request_id: e.request_id,
      details_json: JSON.stringify(e.details),
      shop_prev_hash: e.prev_hash,
    });
    if (hash !== e.hash)
      return broken(
        'hash_mismatch',
        `Entry ${e.seq} (${e.id}) was modified after it was written: its contents no longer match its hash.`,
      );
    prev = e;
    checked++;
  }
  return { ok: true, checked, lastSeq: prev?.seq ?? null };
}

/** The shop's entry as the API shows it: its own chain only (no global seq, no other shop's hash). */
export function shopAuditView(r: AuditRow): ShopAuditEntryView {
  return {
    id: r.id,
    seq: Number(r.shop_seq),
    at: new Date(Number(r.at)).toISOString(),
    actor: { grant_id: r.actor_grant_id, kind: r.actor_kind, name: r.actor_name },
    action: r.action,
    target: { type: r.target_type, id: r.target_id },
    outcome: r.outcome,
    request_id: r.request_id,
    details: JSON.parse(r.details_json) as Record<string, unknown>,
    prev_hash: r.shop_prev_hash ?? '',
    hash: r.shop_hash ?? '',
  };
}

/** Walks `shopId`'s whole chain in the store, page by page (`flowport audit verify --shop`). */
export async function verifyShopAuditChain(
  db: Db,
  shopId: string,
  options: { pageSize?: number } = {},
): Promise<AuditVerifyResult> {
  const pageSize = options.pageSize ?? 5_000;
  let checked = 0;
  let lastSeq: number | null = null;
  let tail: ShopAuditEntryView | null = null;
  for (;;) {
    const rows: AuditRow[] = await db.all<AuditRow>(
      'SELECT * FROM audit_log WHERE shop_id = ? AND shop_seq > ? ORDER BY shop_seq LIMIT ?',
      [shopId, lastSeq ?? 0, pageSize],
    );
    if (rows.length === 0) break;
    const views: ShopAuditEntryView[] = rows.map(shopAuditView);
    // Each page starts with the last entry of the one before, so the link between pages is checked.
    const r = verifyShopAuditEntries(shopId, tail ? [tail, ...views] : views);
    if (!r.ok) return { ...r, checked: checked + r.checked - (tail ? 1 : 0) };
    if (!tail && views[0] && views[0].seq !== 1)
      return {
        ok: false,
        checked,
        lastSeq,
        broken: {
          seq: 1,
          id: null,
          problem: 'seq_gap',
          detail: `Entry 1 is missing (the chain starts at ${views[0].seq}).`,
        },
      };
    checked += views.length;
    tail = views.at(-1) ?? tail;
    lastSeq = tail?.seq ?? lastSeq;
  }
  return { ok: true, checked, lastSeq };
}
