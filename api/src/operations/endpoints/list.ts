// GET /agent/v1/endpoints — the shop's endpoints (sender lanes), without secrets.
import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors/problem.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { endpointStateCounts, endpointView, listShopEndpoints } from '../../reads/endpoints.ts';
import { defineOperation } from '../../core/types.ts';
import { EndpointView } from './schemas.ts';

export const RECENT_WINDOW_HOURS = 24;

export const listEndpointsOperation = defineOperation({
  operationId: 'listEndpoints',
  method: 'get',
  path: `${AGENT_API_PREFIX}/endpoints`,
  summary: 'List endpoints',
  description:
    "The shop's endpoints with their non-secret configuration (secrets show only their last 4 characters) and the last 24 hours of events by state. Deleted endpoints (tombstones) are listed only with `status=deleted`.",
  family: 'setup',
  kind: 'read',
  scope: 'endpoints:read',
  meter: 'simple_read',
  request: {
    query: z.object({
      status: z
        .enum(['active', 'paused', 'archived', 'deleted'])
        .optional()
        .openapi({ param: { name: 'status', in: 'query' }, description: 'Only endpoints in this status.' }),
    }),
  },
  response: z.object({ data: z.array(EndpointView) }).openapi('EndpointList'),
  errors: [],
  mcp: {
    name: 'list_endpoints',
    title: 'List endpoints',
    description:
      'See every sender lane of the shop: sender, auth mode, trigger variant, status and recent traffic by state. Secrets are never shown (last 4 characters only).',
  },
  cli: ['endpoints', 'list'],
  async run({ ctx, input }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const now = ctx.services.now();
    const rows = await listShopEndpoints(ctx.services, p.shopId, { status: input.status });
    const counts = await endpointStateCounts(ctx.services, p.shopId, now - RECENT_WINDOW_HOURS * 3_600_000);
    return {
      data: rows.map((r) => ({
        ...endpointView(r, ctx.services.config.publicUrl, now),
        recent: { window_hours: RECENT_WINDOW_HOURS, by_state: counts.get(r.id) ?? {} },
      })),
    };
  },
});
