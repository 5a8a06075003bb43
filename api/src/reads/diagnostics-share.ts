// What a diagnostics share (intents/kinds/diagnostics-share.ts) bundles beside receipts: the
// endpoints' recent problem events and their attempts of the last day by outcome, and a share
// read back by its token. A read model: SELECTs over events, attempts and diagnostics_shares.
import type { Db } from '../store/db.ts';

/** The shop's newest 50 failed, no_workflow and held events of these endpoints. */
export async function problemEventsOf(
  db: Db,
  shopId: string,
  endpointIds: readonly string[],
): Promise<Record<string, unknown>[]> {
  const marks = endpointIds.map(() => '?').join(', ') || "''";
  return db.all<Record<string, unknown>>(
    `SELECT id, endpoint_id, state, error_code, support_code, attempt_count, received_at, is_test
         FROM events WHERE shop_id = ? AND endpoint_id IN (${marks}) AND state IN ('failed', 'no_workflow', 'held')
        ORDER BY id DESC LIMIT 50`,
    [shopId, ...endpointIds],
  );
}
