// GET /agent/v1/setup — is this shop ready to move events into Flow, and what is missing.
import { z } from '@hono/zod-openapi';
import { ReadinessCheckSchema, RefusalCountsSchema, ShopConnectionFields } from '../read-checks.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { readSetup } from '../../reads/setup.ts';

export const Setup = z
  .object({
    shop: z
      .object({
        id: z.string().describe('Shop id.'),
        domain: z.string().describe("The shop's `*.myshopify.com` domain."),
        plan: z.string().describe('Flowport plan id of the shop (e.g. `free`).'),
        sandbox: z.boolean().describe('True for a sandbox shop: events go to a simulated Flow, never to Shopify.'),
        ...ShopConnectionFields,
      })
      .describe('The shop and its Shopify connection.'),
    flow: z
      .object({
        api_version: z.string().describe('Shopify Admin API version Flowport calls `flowTriggerReceive` with.'),
        trigger_variants: z
          .array(
            z.object({
              variant: z.string().describe('Trigger variant name (e.g. `external_event`).'),
              handle: z.string().describe('Flow trigger handle the variant delivers to.'),
              used_by_endpoints: z.number().int().describe('Endpoints (not deleted) that use this variant.'),
            }),
          )
          .describe('Flow triggers the app provides, one per variant.'),
      })
      .describe('The Shopify Flow side: API version and triggers.'),
    endpoints: z
      .object({
        total: z.number().int().describe('All endpoints ever created, deleted ones included.'),
        active: z.number().int().describe('Endpoints accepting events.'),
        paused: z.number().int().describe('Endpoints refusing new events for now.'),
        archived: z.number().int().describe('Endpoints archived (no intake, history kept).'),
        deleted: z.number().int().describe('Endpoints deleted.'),
      })
      .describe('Endpoint counts by status.'),
    refused_24h: RefusalCountsSchema.extend({
      window_hours: z.number().int().describe('Length of the window counted, in hours (24).'),
    }).describe(
      'Requests refused at intake in the last 24 hours, by error code: they are not events, so the event counts and `last_event_at` leave them out. List them with `listReceipts` (`result=refused`).',
    ),
    last_event_at: Timestamp.nullable().describe('When the last event was received; null if none yet.'),
    last_delivered_at: Timestamp.nullable().describe(
      'When the most recently received event was delivered to Flow; null if it has not been (yet) or there is none.',
    ),
    ready: z.boolean().describe('True when no readiness check fails (nothing in `missing` is blocking).'),
    checks: z.array(ReadinessCheckSchema).describe('Every readiness check with its result.'),
    missing: z
      .array(
        z.object({
          item: z.string().describe('The check that is not passing (its `check` name).'),
          severity: z
            .enum(['blocking', 'advisory'])
            .describe(
              '`blocking`: events will not reach Flow until this is fixed (`ready` is false); `advisory`: events still flow, it needs attention. Blocking items come first.',
            ),
          detail: z.string().describe('What is missing, in plain words.'),
          docs_url: z.string().describe('Docs page on how to fix it.'),
        }),
      )
      .describe(
        'What still needs doing, from the checks that fail (blocking, first) or warn (advisory); empty when set up.',
      ),
  })
  .openapi('Setup');

export const getSetup = defineRead({
  name: 'get_setup',
  path: '/setup',
  summary: 'Read setup and readiness',
  description:
    'Shop connection, Flow trigger readiness, an endpoint summary, last activity and what is missing, each missing item with its docs page.',
  family: 'setup',
  scope: 'setup:read',
  meter: 'simple_read',
  response: Setup,
  mcp: {
    title: 'Check setup and readiness',
    description:
      'Find out whether this shop is ready to move sender events into Shopify Flow: connection, endpoints, trigger handles, recent deliveries, and what is still missing with the docs page for each fix.',
  },
  run: async ({ ctx }) => readSetup({ ctx }),
});
