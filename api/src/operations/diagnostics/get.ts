// GET /agent/v1/diagnostics — a support-safe summary: readiness checks, endpoint
// snapshot without secrets, recent receipt facts and support codes. The same
// facts a diagnostics share freezes; nothing here may be private.
import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors/problem.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { endpointView, listShopEndpoints } from '../../reads/endpoints.ts';
import { readinessChecks, shopRow, stateCounts, WINDOW_MS } from '../../reads/readiness.ts';
import { ReadinessCheckSchema, ShopConnectionFields, shopConnection } from '../read-checks.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { recentShopReceipts } from '../../reads/receipts.ts';

const RECENT_RECEIPTS = 20;

export const Diagnostics = z
  .object({
    generated_at: Timestamp,
    shop: z.object({ id: z.string(), domain: z.string(), plan: z.string(), ...ShopConnectionFields }),
    checks: z.array(ReadinessCheckSchema),
    endpoints: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        sender_label: z.string(),
        auth_mode: z.string(),
        trigger_variant: z.string(),
        status: z.string(),
        config_version: z.number().int(),
        secret_last4: z.string().nullable(),
      }),
    ),
    events_24h: z.object({
      by_state: z.record(z.string(), z.number().int()),
      by_support_code: z.array(z.object({ support_code: z.string(), count: z.number().int() })),
    }),
    recent_receipts: z.array(
      z.object({
        id: z.string(),
        endpoint_id: z.string(),
        event_id: z.string().nullable(),
        received_at: Timestamp,
        http_status: z.number().int(),
        auth_result: z.string(),
        validation_result: z.string(),
        dedupe_decision: z.string(),
        error_code: z.string().nullable(),
        support_code: z.string().nullable(),
      }),
    ),
    redaction: z.string(),
  })
  .openapi('Diagnostics');

export const getDiagnostics = defineOperation({
  operationId: 'getDiagnostics',
  method: 'get',
  path: `${AGENT_API_PREFIX}/diagnostics`,
  summary: 'Read diagnostics',
  description:
    'A support-safe summary: readiness checks, endpoints without secrets, events of the last 24 hours by state and support code, and the most recent receipts. Contains no payloads, secrets or tokens; share it with support through a diagnostics-share intent.',
  family: 'events',
  kind: 'read',
  scope: 'diagnostics:read',
  meter: 'rich_read',
  request: {
    query: z.object({
      endpoint_id: z
        .string()
        .max(64)
        .optional()
        .openapi({
          param: { name: 'endpoint_id', in: 'query' },
          description: 'Limit the summary to one endpoint (`ep_…`).',
        }),
    }),
  },
  response: Diagnostics,
  errors: ['not_found'],
  mcp: {
    name: 'read_diagnostics',
    title: 'Read support diagnostics',
    description:
      'Get a redacted health summary to diagnose delivery problems or hand to support: readiness checks, recent receipts, support codes and event states of the last 24 hours.',
  },
  cli: ['diagnostics'],
  async run({ ctx, input }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const { db, config } = ctx.services;
    const now = ctx.services.now();
    const shop = await shopRow(db, p.shopId);
    if (!shop) throw new AppError('not_found');
    let endpoints = await listShopEndpoints(ctx.services, p.shopId, {});
    if (input.endpoint_id) {
      endpoints = endpoints.filter((e) => e.id === input.endpoint_id);
      if (endpoints.length === 0)
        throw new AppError('not_found', { detail: `No endpoint ${input.endpoint_id} in this shop.` });
    }
    const since = now - WINDOW_MS;
    const epFilter = input.endpoint_id ? ' AND endpoint_id = ?' : '';
    const epParams = input.endpoint_id ? [input.endpoint_id] : [];
    const codes = await db.all<{ support_code: string; n: number }>(
      `SELECT support_code, COUNT(*) AS n FROM events WHERE shop_id = ? AND received_at >= ? AND support_code IS NOT NULL${epFilter}
        GROUP BY support_code ORDER BY support_code`,
      [p.shopId, since, ...epParams],
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
  },
});
