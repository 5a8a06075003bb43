// Receipts: the durable acknowledgement of each sender request, and the tallies of refused ones.
// Owns: receipts, intake_rejection_tallies. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';
import { insertMany, type SqlParam } from '../db.ts';

// intake: a batch's receipt rows (one multi-row INSERT before its COMMIT) and the tallies of refusals past the receipt budget.

/** The columns of a receipt row, in the order receipt rows list their values. */
const RECEIPT_COLUMNS = [
  'id',
  'shop_id',
  'endpoint_id',
  'event_id',
  'request_id',
  'received_at',
  'auth_result',
  'validation_result',
  'dedupe_decision',
  'config_version',
  'http_status',
  'error_code',
  'support_code',
  'body_size',
  'body_sha256',
  'failure',
] as const;

/** Writes a batch's receipt rows (RECEIPT_COLUMNS order), just before its COMMIT. */
export async function insertReceipts(tx: Db, rows: readonly (readonly SqlParam[])[]): Promise<void> {
  await insertMany(tx, 'receipts', RECEIPT_COLUMNS, rows);
}

/** Counts one refused request of an endpoint in its minute's tally for this error code. */
export async function tallyRejection(
  tx: Db,
  endpointId: string,
  minuteStart: number,
  errorCode: string,
  shopId: string,
): Promise<void> {
  await tx.run(
    `INSERT INTO intake_rejection_tallies (endpoint_id, minute_start, error_code, shop_id, count) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (endpoint_id, minute_start, error_code) DO UPDATE SET count = intake_rejection_tallies.count + 1`,
    [endpointId, minuteStart, errorCode, shopId],
  );
}

// intents: a test event's receipt.

/** The receipt of a test event (auth 'test', valid, dedupe bypassed, 202, with the accepted intake code). */
export async function insertTestReceipt(
  tx: Db,
  r: {
    id: string;
    shopId: string;
    endpointId: string;
    eventId: string;
    requestId: string;
    now: number;
    configVersion: number;
    bodySize: number;
    bodySha256: string;
    supportCode: string;
  },
): Promise<void> {
  await tx.run(
    `INSERT INTO receipts (id, shop_id, endpoint_id, event_id, request_id, received_at, auth_result, validation_result,
         dedupe_decision, config_version, http_status, support_code, body_size, body_sha256)
       VALUES (?, ?, ?, ?, ?, ?, 'test', 'valid', 'bypassed', ?, 202, ?, ?, ?)`,
    [
      r.id,
      r.shopId,
      r.endpointId,
      r.eventId,
      r.requestId,
      r.now,
      r.configVersion,
      r.supportCode,
      r.bodySize,
      r.bodySha256,
    ],
  );
}
