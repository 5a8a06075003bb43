// What one group-committed intake batch writes, gathered while its requests run and written just
// before its COMMIT: the event and receipt rows (multi-row INSERTs) and each shop's
// accepted_events meter (one upsert per shop, after the plan cap was checked against it).
import type { Batch } from '../store/committer.ts';
import type { Db, SqlParam } from '../store/db.ts';
import { insertAcceptedEvents } from '../store/tables/events/accept.ts';
import { insertReceipts } from '../store/tables/receipts.ts';
import { addAcceptedEvents, readAcceptedEvents } from '../store/tables/usage.ts';
import type { EndpointRow } from '../store/tables/endpoints.ts';
import { usagePeriod } from '../usage/meters.ts';

/** Rows a batch writes just before it commits (multi-row INSERTs). */
export interface BatchRows {
  events: SqlParam[][];
  receipts: SqlParam[][];
}

/** The batch's rows, the first call also arranging their write before the commit. */
export function batchRows(batch: Batch): BatchRows {
  let rows = batch.scratch.get('rows') as BatchRows | undefined;
  if (!rows) {
    const r: BatchRows = { events: [], receipts: [] };
    rows = r;
    batch.scratch.set('rows', r);
    batch.beforeCommit(async (tx) => {
      await insertAcceptedEvents(tx, r.events);
      await insertReceipts(tx, r.receipts);
    });
  }
  return rows;
}

/** What a receipt row records. */
export interface ReceiptFacts {
  id: string;
  row: EndpointRow;
  eventId: string | null;
  requestId: string;
  now: number;
  auth: string;
  validation: string;
  dedupe: string;
  httpStatus: number;
  errorCode: string | null;
  supportCode: string;
  size: number;
  hash: string | null;
  /** A refusal's failed check as JSON (errors/auth-failure.ts); null otherwise. */
  failure: string | null;
}

/** Queues a receipt row; the batch writes it just before it commits. */
export function queueReceipt(batch: Batch, r: ReceiptFacts): void {
  batchRows(batch).receipts.push([
    r.id,
    r.row.shop_id,
    r.row.id,
    r.eventId,
    r.requestId,
    r.now,
    r.auth,
    r.validation,
    r.dedupe,
    r.row.config_version,
    r.httpStatus,
    r.errorCode,
    r.supportCode,
    r.size,
    r.hash,
    r.failure,
  ]);
}

/** A shop's accepted_events in this batch: the stored count, and what the batch adds to it. */
export interface BatchUsage {
  count: number;
  added: number;
}

/**
 * Reads the shop's accepted_events count into the batch's scratch (under `usageKey`), once per
 * batch and shop: later requests take it from there; what the batch adds is written just before
 * it commits.
 */
export async function readBatchUsage(
  tx: Db,
  batch: Batch,
  usageKey: string,
  shopId: string,
  now: number,
): Promise<BatchUsage> {
  const period = usagePeriod(now);
  const u: BatchUsage = { count: await readAcceptedEvents(tx, shopId, period), added: 0 };
  batch.scratch.set(usageKey, u);
  batch.beforeCommit(async (t) => {
    if (u.added === 0) return;
    await addAcceptedEvents(t, shopId, period, u.added);
  });
  return u;
}
