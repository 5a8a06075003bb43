// Receipt reads: the durable acknowledgement of one intake request.
import type { Db } from '../store/db.ts';

export interface ReceiptRow {
  id: string;
  shop_id: string;
  endpoint_id: string;
  event_id: string | null;
  request_id: string;
  received_at: number;
  auth_result: string;
  validation_result: string;
  dedupe_decision: string;
  config_version: number;
  http_status: number;
  error_code: string | null;
  support_code: string | null;
  body_size: number;
  body_sha256: string | null;
}

export async function getShopReceipt(db: Db, shopId: string, receiptId: string): Promise<ReceiptRow | undefined> {
  return db.get<ReceiptRow>('SELECT * FROM receipts WHERE id = ? AND shop_id = ?', [receiptId, shopId]);
}

export async function receiptView(db: Db, r: ReceiptRow) {
  const ev = r.event_id
    ? await db.get<{
        state: string;
        support_code: string | null;
        error_code: string | null;
        delivered_at: number | null;
        attempt_count: number;
      }>('SELECT state, support_code, error_code, delivered_at, attempt_count FROM events WHERE id = ?', [r.event_id])
    : undefined;
  return {
    id: r.id,
    event_id: r.event_id,
    endpoint_id: r.endpoint_id,
    request_id: r.request_id,
    received_at: new Date(Number(r.received_at)).toISOString(),
    auth_result: r.auth_result,
    validation_result: r.validation_result,
    dedupe_decision: r.dedupe_decision,
    endpoint_config_version: Number(r.config_version),
    http_status: Number(r.http_status),
    error_code: r.error_code,
    support_code: r.support_code,
    body_size: Number(r.body_size),
    body_sha256: r.body_sha256,
    handoff: ev
      ? {
          state: ev.state,
          support_code: ev.support_code,
          error_code: ev.error_code,
          delivered_at: ev.delivered_at === null ? null : new Date(Number(ev.delivered_at)).toISOString(),
          attempt_count: Number(ev.attempt_count),
        }
      : null,
  };
}
