// GET /agent/v1/setup — is this shop ready to move events into Flow, and what is missing.
import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors/problem.ts';
import { handleForVariant } from '../../handoff/triggers.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { TRIGGER_VARIANTS } from '../../services/endpoints.ts';
import { readinessChecks, shopRow } from '../../reads/readiness.ts';
import { ReadinessCheckSchema, ShopConnectionFields, shopConnection } from '../read-checks.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';

export const Setup = z
  .object({
    shop: z.object({
      id: z.string(),
      domain: z.string(),
      plan: z.string(),
      sandbox: z.boolean(),
      ...ShopConnectionFields,
    }),
    flow: z.object({
      api_version: z.string(),
      trigger_variants: z.array(
        z.object({ variant: z.string(), handle: z.string(), used_by_endpoints: z.number().int() }),
      ),
    }),
    endpoints: z.object({
      total: z.number().int(),
      active: z.number().int(),
      paused: z.number().int(),
      archived: z.number().int(),
      deleted: z.number().int(),
    }),
    last_event_at: Timestamp.nullable(),
    last_delivered_at: Timestamp.nullable(),
    ready: z.boolean().describe('True when no readiness check fails.'),
    checks: z.array(ReadinessCheckSchema),
    missing: z.array(z.object({ item: z.string(), detail: z.string(), docs_url: z.string() })),
  })
  .openapi('Setup');

export const getSetup = defineOperation({
  operationId: 'getSetup',
  method: 'get',
  path: `${AGENT_API_PREFIX}/setup`,
  summary: 'Read setup and readiness',
  description:
    'Shop connection, Flow trigger readiness, an endpoint summary, last activity and what is missing, each missing item with its docs page.',
  family: 'setup',
  kind: 'read',
  scope: 'setup:read',
  meter: 'simple_read',
  request: {},
  response: Setup,
  errors: [],
  mcp: {
    name: 'read_setup',
    title: 'Check setup and readiness',
    description:
      'Find out whether this shop is ready to move sender events into Shopify Flow: connection, endpoints, trigger handles, recent deliveries, and what is still missing with the docs page for each fix.',
  },
  cli: ['setup'],
  async run({ ctx }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const { db, config } = ctx.services;
    const now = ctx.services.now();
    const shop = await shopRow(db, p.shopId);
    if (!shop) throw new AppError('not_found');
    const eps = await db.all<{ status: string; deleted_at: number | null; trigger_variant: string }>(
      'SELECT status, deleted_at, trigger_variant FROM endpoints WHERE shop_id = ?',
      [p.shopId],
    );
    const live = eps.filter((e) => !e.deleted_at);
    const last = await db.get<{ received_at: number | null; delivered_at: number | null }>(
      'SELECT MAX(received_at) AS received_at, MAX(delivered_at) AS delivered_at FROM events WHERE shop_id = ?',
      [p.shopId],
    );
    const checks = await readinessChecks(db, p.shopId, config.publicUrl, now);
    const iso = (ms: number | null | undefined) =>
      ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString();
    return {
      shop: {
        id: shop.id,
        domain: shop.domain,
        plan: shop.plan,
        sandbox: Number(shop.sandbox) === 1,
        ...shopConnection(shop),
      },
      flow: {
        api_version: config.shopify.apiVersion,
        trigger_variants: TRIGGER_VARIANTS.map((v) => ({
          variant: v,
          handle: handleForVariant(v),
          used_by_endpoints: live.filter((e) => e.status === 'active' && e.trigger_variant === v).length,
        })),
      },
      endpoints: {
        total: live.length,
        active: live.filter((e) => e.status === 'active').length,
        paused: live.filter((e) => e.status === 'paused').length,
        archived: live.filter((e) => e.status === 'archived').length,
        deleted: eps.length - live.length,
      },
      last_event_at: iso(last?.received_at),
      last_delivered_at: iso(last?.delivered_at),
      ready: checks.every((c) => c.status !== 'fail'),
      checks,
      missing: checks
        .filter((c) => c.status !== 'pass')
        .map((c) => ({ item: c.check, detail: c.detail, docs_url: c.docs_url })),
    };
  },
});
