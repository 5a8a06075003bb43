// GET /agent/v1/endpoints — the shop's endpoints (sender lanes), without secrets.
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { Cursor, Limit, PageInfo } from '../read-schemas.ts';
import { EndpointView } from './schemas.ts';
import { listEndpointViews } from '../../reads/endpoints.ts';

export const listEndpointsOperation = defineRead({
  name: 'list_endpoints',
  path: '/endpoints',
  summary: 'List endpoints',
  description:
    "The shop's endpoints with their non-secret configuration (secrets show only their last 4 characters) and the last 24 hours of events by state. Deleted endpoints (tombstones) are listed only with `status=deleted`.",
  family: 'setup',
  scope: 'endpoints:read',
  meter: 'simple_read',
  request: {
    query: z.object({
      status: z
        .enum(['active', 'paused', 'archived', 'deleted'])
        .optional()
        .openapi({ param: { name: 'status', in: 'query' }, description: 'Only endpoints in this status.' }),
      cursor: Cursor,
      limit: Limit,
    }),
  },
  response: z
    .object({
      data: z.array(EndpointView).describe("The shop's endpoints, in creation order (by id)."),
      page: PageInfo,
    })
    .openapi('EndpointList'),
  mcp: {
    title: 'List endpoints',
    description:
      'See every sender lane of the shop: sender, auth mode, trigger variant, status and recent traffic by state. Secrets are never shown (last 4 characters only).',
  },
  run: async ({ ctx, input }) => listEndpointViews({ ctx, input }),
});
