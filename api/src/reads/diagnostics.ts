// The diagnostics bundle (getDiagnostics): redacted, no payload bodies or secrets.
import { AppError } from '../errors/problem.ts';
import { endpointView, listShopEndpoints } from './endpoints.ts';
import { readinessChecks, callerShopRow, stateCounts, WINDOW_MS } from './readiness.ts';
import { recentShopReceipts, refusedWindow } from './receipts.ts';
import type { OperationContext } from '../core/types.ts';
import { shopConnection } from './shared.ts';
import { eventWindowSql, windowParams } from '../store/tables/events/window-counts.ts';

const RECENT_RECEIPTS = 20;

/** The shop's diagnostics bundle: readiness, endpoints, 24 h of events by state and support code, recent receipts (getDiagnostics). */
export async function readDiagnostics({ ctx, input }: { ctx: OperationContext; input: { endpoint_id?: string } }) {
  const p = ctx.principal;
  const { db, config } = ctx.services;
  const now = ctx.services.now();
  const shop = await callerShopRow(db, p.shopId);
  let endpoints = await listShopEndpoints(ctx.services, p.shopId, {});
  if (input.endpoint_id) {
    endpoints = endpoints.filter((e) => e.id === input.endpoint_id);
    if (endpoints.length === 0)
      throw new AppError('not_found', { detail: `No endpoint ${input.endpoint_id} in this shop.` });
  }
  const since = now - WINDOW_MS;
  const codes = await db.all<{ support_code: string; n: number }>(
    `SELECT support_code, SUM(n) AS n FROM (${eventWindowSql(input.endpoint_id !== undefined)}) AS w
      WHERE support_code IS NOT NULL GROUP BY support_code HAVING SUM(n) > 0 ORDER BY support_code`,
    windowParams(p.shopId, since, input.endpoint_id),
  );
  const receipts = await recentShopReceipts(db, p.shopId, {
    ...(input.endpoint_id ? { endpointIds: [input.endpoint_id] } : {}),
    limit: RECENT_RECEIPTS,
  });
  return {
    generated_at: new Date(now).toISOString(),
    shop: { id: shop.id, domain: shop.domain, plan: shop.plan, ...shopConnection(shop) },
    checks: await readinessChecks(db, p.shopId, config.publicUrl, now, input.endpoint_id),
    endpoints: endpoints.map((e) => {
      const v = endpointView(e, config.publicUrl, now);
      return {
        id: v.id,
        name: v.name,
        sender_label: v.sender_label,
        auth_mode: v.auth_mode,
        trigger_variant: v.trigger_variant,
        status: v.status,
        config_version: v.config_version,
        secret_last4: v.secret.last4,
      };
    }),
    events_24h: {
      by_state: await stateCounts(db, p.shopId, since, input.endpoint_id),
      by_support_code: codes.map((c) => ({ support_code: c.support_code, count: Number(c.n) })),
    },
    refused_24h: await refusedWindow(db, p.shopId, now, input.endpoint_id),
    recent_receipts: receipts.map((r) => ({
      id: r.id,
      endpoint_id: r.endpoint_id,
      event_id: r.event_id,
      received_at: new Date(Number(r.received_at)).toISOString(),
      http_status: Number(r.http_status),
      auth_result: r.auth_result,
      validation_result: r.validation_result,
      dedupe_decision: r.dedupe_decision,
      error_code: r.error_code,
      support_code: r.support_code,
    })),
    redaction: 'No payload bodies, secrets, tokens or sender auth headers are included.',
  };
}
