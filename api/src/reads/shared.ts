// Small pieces every read shares: timestamps as RFC 3339 text, sealed paging cursors, a
// shop's connection facts, a list's WHERE clause built filter by filter.
import type { SecretBox } from '../lib/crypto.ts';
import type { SqlParam } from '../store/db.ts';

export const iso = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
export const isoReq = (ms: number): string => new Date(Number(ms)).toISOString();

const SEALED = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{1,200}$/;

/**
 * A keyset cursor over a position (a time-sortable id or a sequence number), sealed with the server key (AES-256-GCM):
 * opaque, and any edit or forgery fails to open. `scope` binds it to what it pages
 * (e.g. shop and order), so another shop's or another order's cursor is refused.
 */
export function sealCursor(secrets: SecretBox, scope: string, id: string): string {
  return secrets.encrypt(`c1|${scope}|${id}`);
}

/** The position inside a cursor this server sealed for `scope`, or null for anything else. */
export function openCursor(secrets: SecretBox, scope: string, cursor: string): string | null {
  // Only the exact sealed shape (a full 16-byte tag) reaches decryption.
  if (!SEALED.test(cursor)) return null;
  // Canonical base64url only: unused low bits of a last character would otherwise give one cursor many spellings.
  if (cursor.split('.').some((part, i) => i > 0 && Buffer.from(part, 'base64url').toString('base64url') !== part))
    return null;
  let text: string;
  try {
    text = secrets.decrypt(cursor);
  } catch {
    return null;
  }
  // The position: a time-sortable id (events) or a sequence number (audit); callers check its form.
  const m = /^c1\|(.+)\|([0-9a-z_]{1,64})$/.exec(text);
  return m && m[1] === scope ? (m[2] ?? null) : null;
}

/** ShopConnectionFields' values from a shop row. */
export function shopConnection(shop: { connection_status: string; next_probe_at: number | string | null }): {
  connection_status: string;
  next_probe_at: string | null;
} {
  return {
    connection_status: shop.connection_status,
    next_probe_at: shop.next_probe_at === null ? null : new Date(Number(shop.next_probe_at)).toISOString(),
  };
}

/** A WHERE clause built filter by filter: its conditions and their parameters, in the same order. */
export interface Conditions {
  where: string[];
  params: SqlParam[];
  /** Adds one condition with the values of its placeholders. */
  add(condition: string, ...values: SqlParam[]): void;
  /** `column = ?` when the filter is given; nothing when it is absent. */
  eq(column: string, value: string | undefined): void;
}

/** Conditions starting with `first` (the shop the list is scoped to) and its values. */
export function conditions(first: string, ...values: SqlParam[]): Conditions {
  const where = [first];
  const params = [...values];
  const add = (condition: string, ...more: SqlParam[]) => {
    where.push(condition);
    params.push(...more);
  };
  const eq = (column: string, value: string | undefined) => {
    if (value !== undefined) add(`${column} = ?`, value);
  };
  return { where, params, add, eq };
}

// An event row's kind (EVENT_KIND_SQL) is defined with the counts kept by it, in the events' owner.
export { EVENT_KIND_SQL, type EventKind } from '../store/tables/events/counts.ts';
