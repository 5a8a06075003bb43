// GET /agent/v1/setup — is this shop ready to move events into Flow, and what is missing.
import { z } from '@hono/zod-openapi';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { ReadinessCheckSchema, ShopConnectionFields } from '../read-checks.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { readSetup } from '../../reads/setup.ts';

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
    name: 'get_setup',
    title: 'Check setup and readiness',
    description:
      'Find out whether this shop is ready to move sender events into Shopify Flow: connection, endpoints, trigger handles, recent deliveries, and what is still missing with the docs page for each fix.',
  },
  cli: ['get-setup'],
  run: async ({ ctx }) => readSetup({ ctx }),
});
