// Intake's dedupe look: the first earlier copy of an external event id on an endpoint, read in
// the batch's transaction while the endpoint's dedupe lock is held (committer.ts), one query per
// batch and endpoint for every id awaiting a check.
import type { Batch } from '../store/committer.ts';
import type { Db } from '../store/db.ts';
import { findFirstCopies, findFirstCopy, type FirstCopy } from '../store/tables/events.ts';

/** One batch's dedupe query on one endpoint: which external ids it read, from when, and the rows it found. */
interface DedupeLookup {
  from: number;
  covered: Set<string>;
  rows: Map<string, FirstCopy[]>;
}

/** At most this many external ids in one dedupe query (well under both stores' parameter limits). */
const DEDUPE_LOOKUP_MAX = 500;

/**
 * The first earlier copy of `ext` on this endpoint since `since`. The first check of a batch reads
 * every external id awaiting a check on this endpoint (`awaiting`, by endpoint) in one query, and the batch's
 * later checks use that answer: on PostgreSQL a query per request was a round trip each, inside
 * the one batch in flight. An id the batch's query did not cover is read alone.
 */
export async function firstCopyOf(
  tx: Db,
  batch: Batch,
  awaiting: ReadonlyMap<string, Iterable<string>>,
  endpointId: string,
  ext: string,
  since: number,
): Promise<string | undefined> {
  const key = `dedupe:${endpointId}`;
  let found = batch.scratch.get(key) as DedupeLookup | undefined;
  if (!found) {
    const ids = [ext];
    for (const other of awaiting.get(endpointId) ?? []) {
      if (ids.length >= DEDUPE_LOOKUP_MAX) break;
      if (other !== ext) ids.push(other);
    }
    // A minute of slack: requests of one batch were received moments apart; each is checked against its own window below.
    const from = since - 60_000;
    const rows = await findFirstCopies(tx, ids, endpointId, from);
    const lookup: DedupeLookup = { from, covered: new Set(ids), rows: new Map() };
    for (const r of rows) {
      const list = lookup.rows.get(r.ext);
      if (list) list.push(r);
      else lookup.rows.set(r.ext, [r]);
    }
    found = lookup;
    batch.scratch.set(key, lookup);
  }
  if (found.covered.has(ext) && since >= found.from) {
    let first: { id: string; received_at: number } | undefined;
    for (const r of found.rows.get(ext) ?? [])
      if (r.received_at >= since && (!first || r.received_at < first.received_at)) first = r;
    return first?.id;
  }
  return findFirstCopy(tx, endpointId, ext, since);
}
