// GET /agent/v1/diagnostics — a support-safe summary: readiness checks, endpoint
// snapshot without secrets, recent receipt facts and support codes. The same
// facts a diagnostics share freezes; nothing here may be private.
import { z } from '@hono/zod-openapi';
import { ReadinessCheckSchema, RefusalCountsSchema, ShopConnectionFields } from '../read-checks.ts';
import { Timestamp, nullableText, wholeNumber } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { readDiagnostics } from '../../reads/diagnostics.ts';

export const Diagnostics = z
  .object({
    generated_at: Timestamp.describe('When this summary was produced (ISO 8601, UTC).'),
    shop: z
      .object({
        id: z.string().describe('Shop id.'),
        domain: z.string().describe("The shop's `*.myshopify.com` domain."),
        plan: z.string().describe('Flowport plan id of the shop.'),
        ...ShopConnectionFields,
      })
      .describe('The shop and its Shopify connection.'),
    checks: z.array(ReadinessCheckSchema).describe('Every readiness check with its result.'),
    endpoints: z
      .array(
        z.object({
          id: z.string().describe('Endpoint id (`ep_…`).'),
          name: z.string().describe('Endpoint name.'),
          sender_label: z.string().describe('Who sends to it.'),
          auth_mode: z.string().describe('How senders are verified (e.g. `hmac_sha256`, `stripe`).'),
          trigger_variant: z.string().describe('Flow trigger its events go to.'),
          status: z.string().describe('`active`, `paused`, `archived` or `deleted`.'),
          config_version: wholeNumber('Current configuration version.'),
          secret_last4: nullableText('Last 4 characters of the signing secret; null when it has none.'),
        }),
      )
      .describe('Every endpoint, without secrets.'),
    events_24h: z
      .object({
        by_state: z
          .record(z.string(), z.number().int())
          .describe('Event count per lifecycle state (e.g. `{"delivered": 12, "failed": 1}`).'),
        by_support_code: z
          .array(
            z.object({
              support_code: z.string().describe('Support code.'),
              count: wholeNumber('Events that stopped with it.'),
            }),
          )
          .describe('Events that did not go through, counted by support code.'),
      })
      .describe('Events received in the last 24 hours.'),
    refused_24h: RefusalCountsSchema.extend({
      window_hours: z.number().int().describe('Length of the window counted, in hours (24).'),
    }).describe(
      'Requests refused at intake in the last 24 hours, by error code (of the endpoint when `endpoint_id` is given). List them with `listReceipts` (`result=refused`).',
    ),
    recent_receipts: z
      .array(
        z.object({
          id: z.string().describe('Receipt id (`rcpt_…`).'),
          endpoint_id: z.string().describe('Endpoint the request was sent to.'),
          event_id: nullableText('Event stored for it; null when intake stored none.'),
          received_at: Timestamp.describe('When intake received the request.'),
          http_status: wholeNumber('HTTP status Flowport answered the sender with.'),
          auth_result: z.string().describe('Result of checking the signature or credentials.'),
          validation_result: z.string().describe('Result of validating the body.'),
          dedupe_decision: z.string().describe('Dedupe result (e.g. `unique`).'),
          error_code: nullableText('Catalog error code when refused; null when accepted.'),
          support_code: nullableText('Support code when refused; null when accepted.'),
        }),
      )
      .describe('The most recent receipts, newest first: facts only, no bodies or headers.'),
    redaction: z.string().describe('What was left out of this summary, in one sentence.'),
  })
  .openapi('Diagnostics');

export const getDiagnostics = defineRead({
  name: 'get_diagnostics',
  path: '/diagnostics',
  summary: 'Read diagnostics',
  description:
    'A support-safe summary: readiness checks, endpoints without secrets, events of the last 24 hours by state and support code, and the most recent receipts. Contains no payloads, secrets or tokens; share it with support through a diagnostics-share intent.',
  family: 'events',
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
    title: 'Read support diagnostics',
    description:
      'Get a redacted health summary to diagnose delivery problems or hand to support: readiness checks, recent receipts, support codes and event states of the last 24 hours.',
  },
  run: async ({ ctx, input }) => readDiagnostics({ ctx, input }),
});
