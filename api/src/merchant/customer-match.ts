// Which events a Shopify customer privacy request (customers/redact, customers/data_request) is
// about. Matching is exact and happens in process on the parsed body (ADR 1211): a body is JSON
// and is walked value by value, so one customer's address or number never names another's.
import type { EventBodyRow } from '../store/tables/events/merchant.ts';

export interface CustomerRef {
  id?: number | string | null;
  email?: string | null;
  phone?: string | null;
}

/** Fewer digits than this identify nobody ("1", an extension): such a phone matches nothing. */
export const MIN_PHONE_DIGITS = 7;

/** A value written as a phone number: digits and the usual separators only, no words. */
const PHONE_TEXT = /^[+\d\s().\-/]+$/;

/** Keys (lower case, without `_` and `-`) whose value is the customer's or an order's id. */
const ID_KEYS = { customerid: 'Customer', orderid: 'Order' } as const;
/** Objects (by the key holding them) whose `id` is a customer's or an order's id. */
const ID_PARENTS: Record<string, 'Customer' | 'Order'> = {
  customer: 'Customer',
  customers: 'Customer',
  order: 'Order',
  orders: 'Order',
};

type Kind = 'Customer' | 'Order';

/** The numeric form of a resource id given as a number, numeric text or an Admin API GID. */
function numericId(id: unknown): string | null {
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return String(id);
  if (typeof id !== 'string') return null;
  const s = id.trim().replace(/^gid:\/\/shopify\/\w+\//, '');
  return /^\d+$/.test(s) ? s : null;
}

function normKey(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, '');
}

export interface CustomerMatcher {
  /** True when the request names nothing a body or an id could match. */
  readonly empty: boolean;
  /** Whether one of the shop's events (with its body) is about this customer. */
  matches(row: EventBodyRow): boolean;
}

/**
 * The rule both customer topics use. An event matches when:
 * - its resource_id or related_resource_id is the customer id or an order id (number or GID);
 * - its JSON body holds, as a whole value: the email (letter case ignored); a phone with the same
 *   digits (≥ MIN_PHONE_DIGITS, written with digits and separators only); the customer's or an
 *   order's GID; or the bare id under `customer_id`/`order_id` or as the `id` of a `customer`/
 *   `order` object. Nothing matches by substring.
 */
export function customerMatcher(
  customer: CustomerRef | null | undefined,
  orderIds: readonly unknown[],
): CustomerMatcher {
  const ids: Record<Kind, Set<string>> = { Customer: new Set(), Order: new Set() };
  const cid = numericId(customer?.id);
  if (cid) ids.Customer.add(cid);
  for (const o of orderIds) {
    const n = numericId(o);
    if (n) ids.Order.add(n);
  }
  const columnIds = new Set<string>();
  const gids = new Set<string>();
  for (const kind of ['Customer', 'Order'] as const)
    for (const n of ids[kind]) {
      columnIds.add(n).add(`gid://shopify/${kind}/${n}`);
      gids.add(`gid://shopify/${kind}/${n}`);
    }
  const email = typeof customer?.email === 'string' ? customer.email.trim().toLowerCase() : '';
  const phoneDigits = typeof customer?.phone === 'string' ? customer.phone.replace(/\D/g, '') : '';
  const phone = phoneDigits.length >= MIN_PHONE_DIGITS ? phoneDigits : '';

  const valueMatches = (value: unknown, idKind: Kind | null): boolean => {
    if (typeof value === 'string') {
      const t = value.trim();
      if (email && t.toLowerCase() === email) return true;
      if (gids.has(t)) return true;
      if (phone && PHONE_TEXT.test(t) && t.replace(/\D/g, '') === phone) return true;
    } else if (typeof value === 'number') {
      if (phone && Number.isSafeInteger(value) && String(value) === phone) return true;
    } else return false;
    const n = idKind ? numericId(value) : null;
    return n !== null && idKind !== null && ids[idKind].has(n);
  };

  const bodyMatches = (body: string): boolean => {
    let root: unknown;
    try {
      root = JSON.parse(body);
    } catch {
      return false; // Not JSON: only the id columns can name the customer.
    }
    // Iterative walk (a deeply nested body cannot exhaust the stack): [value, its key, its parent's key].
    const stack: [unknown, string, string][] = [[root, '', '']];
    while (stack.length) {
      const [value, key, parentKey] = stack.pop() as [unknown, string, string];
      if (Array.isArray(value)) {
        for (const v of value) stack.push([v, key, parentKey]);
      } else if (value !== null && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) stack.push([v, normKey(k), key]);
      } else {
        const idKind = ID_KEYS[key as keyof typeof ID_KEYS] ?? (key === 'id' ? (ID_PARENTS[parentKey] ?? null) : null);
        if (valueMatches(value, idKind)) return true;
      }
    }
    return false;
  };

  return {
    empty: columnIds.size === 0 && !email && !phone,
    matches: (row) =>
      (row.resource_id !== null && columnIds.has(row.resource_id)) ||
      (row.related_resource_id !== null && columnIds.has(row.related_resource_id)) ||
      bodyMatches(row.body),
  };
}
