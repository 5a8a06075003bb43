// The audit log: append-only and hash-chained. Each entry stores the previous
// entry's hash and its own hash over a canonical encoding of every column, so
// editing, deleting or reordering a row breaks the chain at that row.
// One global chain (seq 1, 2, 3 …): appends are serialized by the store's write
// transaction (SQLite) or a transaction-scoped advisory lock (Postgres).
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
}

type HashedFields = Omit<AuditRow, 'hash'>;

/** The hash of one entry: SHA-256 over a fixed-order JSON array of every column but `hash`. */
export function auditHash(r: HashedFields): string {
  const canonical = JSON.stringify([
    Number(r.seq),
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
    r.prev_hash,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
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
    const cols = Object.keys(fields);
    await tx.run(`INSERT INTO audit_log (${cols.join(', ')}, hash) VALUES (${cols.map(() => '?').join(', ')}, ?)`, [
      ...(Object.values(fields) as SqlParam[]),
      hash,
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
      if (row.seq !== expectedSeq) {
        return {
          ok: false,
          checked,
          lastSeq,
          broken: {
            seq: expectedSeq,
            id: null,
            problem: 'seq_gap',
            detail: `Entry seq ${expectedSeq} is missing (next present entry is seq ${row.seq}, ${row.id}).`,
          },
        };
      }
      if (row.prev_hash !== prevHash) {
        return {
          ok: false,
          checked,
          lastSeq,
          broken: {
            seq: row.seq,
            id: row.id,
            problem: 'prev_hash_mismatch',
            detail: `Entry seq ${row.seq} (${row.id}) does not point at the hash of entry seq ${row.seq - 1}.`,
          },
        };
      }
      if (auditHash(row) !== row.hash) {
        return {
          ok: false,
          checked,
          lastSeq,
          broken: {
            seq: row.seq,
            id: row.id,
            problem: 'hash_mismatch',
            detail: `Entry seq ${row.seq} (${row.id}) was modified after it was written: its contents no longer match its hash.`,
          },
        };
      }
      prevHash = row.hash;
      lastSeq = row.seq;
      expectedSeq = row.seq + 1;
      checked++;
    }
  }
  return { ok: true, checked, lastSeq };
}
