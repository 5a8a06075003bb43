// Finding events by the Shopify resource their endpoint's mapping extracted (listEvents'
// `resource_id`, ADR 0320). events.resource_id holds the id as the sender sent it: digits
// (`5623452345`) or a GID (`gid://shopify/Order/5623452345`). A number matches both forms; a
// GID matches itself and the bare number (a number carries no type). Order NUMBERS (`#2002`)
// are not ids and are not stored: they are refused with a pointer to the docs.
import { AppError } from '../errors/problem.ts';
import { normaliseResourceId } from '../lib/shopify-ids.ts';
import type { SqlParam } from '../store/db.ts';

/**
 * The trailing digits of events.resource_id: the expression events_shop_resource is keyed on
 * (migration 1711). Keep the two identical, or the planners cannot use the index.
 */
const RESOURCE_DIGITS_SQL = "substr(e.resource_id, length(rtrim(e.resource_id, '0123456789')) + 1)";

/** A checked `resource_id` filter: its digits, and the GID when one was given. */
export interface ResourceIdFilter {
  digits: string;
  gid: string | null;
}

/** Checks a `resource_id` filter value; invalid_request (naming the field) when it is not a Shopify id. */
export function resourceIdFilter(value: string): ResourceIdFilter {
  const id = normaliseResourceId(value, null);
  if (id === null) {
    throw new AppError('invalid_request', {
      detail:
        'resource_id must be a Shopify resource id: digits (`5623452345`) or a GID (`gid://shopify/Order/5623452345`). An order NUMBER such as #2002 is not an id; find the order id in Shopify first (the number in the admin URL of the order).',
      errors: [{ path: 'resource_id', message: 'Not a numeric id or GID' }],
    });
  }
  const gid = id.startsWith('gid://') ? id : null;
  return { digits: gid ? gid.slice(gid.lastIndexOf('/') + 1) : id, gid };
}

/** The condition an events query adds for the filter (events aliased `e`), served by events_shop_resource. */
export function resourceIdCondition(f: ResourceIdFilter): { sql: string; params: SqlParam[] } {
  const digits = `e.resource_id IS NOT NULL AND ${RESOURCE_DIGITS_SQL} = ?`;
  return f.gid
    ? { sql: `${digits} AND (e.resource_id = ? OR e.resource_id = ?)`, params: [f.digits, f.gid, f.digits] }
    : { sql: digits, params: [f.digits] };
}
