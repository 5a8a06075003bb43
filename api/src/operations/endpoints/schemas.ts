import { z } from '@hono/zod-openapi';
import { Timestamp } from '../read-schemas.ts';
import { RefusalCountsSchema } from '../read-checks.ts';
import { ReceiptFailureOrNull } from '../receipts/schemas.ts';

export const EndpointView = z
  .object({
    id: z.string().openapi({ example: 'ep_01jd0000000000000000000000', description: 'Endpoint id (`ep_…`).' }),
    name: z.string().describe('Name the merchant gave the endpoint.'),
    sender_label: z.string().describe('Who sends to it (free text, e.g. `Stripe`); shown in Flow as the sender.'),
    trigger_variant: z
      .string()
      .describe(
        'Flow trigger its events go to: `external_event`, `external_order_event`, `external_customer_event` or `external_product_event`.',
      ),
    auth_mode: z
      .string()
      .describe(
        'How senders are verified: `hmac_sha256`, `github`, `shopify`, `stripe`, `standard_webhooks`, `slack`, `static_header` or `basic`.',
      ),
    status: z
      .enum(['active', 'paused', 'archived', 'deleted'])
      .describe('`active` accepts events; `paused` refuses them for now; `archived` and `deleted` accept none.'),
    config_version: z
      .number()
      .int()
      .describe('Increases on every configuration change; each receipt records the version it was checked against.'),
    config: z
      .record(z.string(), z.unknown())
      .describe(
        'Non-secret configuration: auth parameters (header names, encodings, tolerance), mapping, dedupe window. `mapping.external_id` is the sender id dedupe uses as it applies: `preset` only for auth modes that have one (github, shopify, stripe, standard_webhooks, slack), `none` when there is nothing to dedupe on.',
      ),
    secret: z
      .object({
        configured: z.boolean().describe('True when the endpoint has a signing secret (auth modes that need one).'),
        last4: z
          .string()
          .nullable()
          .describe('Last 4 characters of the signing secret. The secret itself is shown once, on create or rotate.'),
        previous_secret_valid_until: Timestamp.nullable().describe(
          'While a rotation overlap runs, the previous secret stays valid until then.',
        ),
      })
      .describe('The signing secret, described without revealing it.'),
    ingest_url: z.string().describe('Absolute URL senders POST events to.'),
    created_at: Timestamp.describe('When the endpoint was created (ISO 8601, UTC).'),
    updated_at: Timestamp.describe('When its configuration last changed.'),
    archived_at: Timestamp.nullable().describe('When it was archived; null unless archived.'),
    deleted_at: Timestamp.nullable().describe('When it was deleted; null unless deleted.'),
    warnings: z
      .array(
        z.object({
          code: z
            .enum(['no_dedupe_id'])
            .describe(
              '`no_dedupe_id`: no external event id to dedupe on (`config.mapping.external_id` is `none`), so the same webhook sent twice runs the workflow twice.',
            ),
          severity: z.enum(['advisory']).describe('`advisory`: events still flow; it needs attention.'),
          detail: z.string().describe('What is wrong and how to fix it, in plain words.'),
        }),
      )
      .describe(
        "What this endpoint's configuration leaves open (advisory; setup's `dedupe_ids` check says the same); empty when nothing.",
      ),
    recent: z
      .object({
        window_hours: z.number().int().describe('Length of the window counted, in hours (24).'),
        by_state: z
          .record(z.string(), z.number().int())
          .describe('Event count per lifecycle state (e.g. `{"delivered": 12, "failed": 1}`).'),
        refused: RefusalCountsSchema.extend({
          latest: z
            .object({
              receipt_id: z.string().describe('The receipt of the newest refused request (`rcpt_…`).'),
              received_at: Timestamp.describe('When it arrived.'),
              http_status: z.number().int().describe('What Flowport answered the sender.'),
              error_code: z.string().nullable().describe('Why it was refused (an error code).'),
              failure: ReceiptFailureOrNull,
            })
            .nullable()
            .describe(
              "The newest refused request in the window that has a stored receipt, as getReceipt says it; null when none (no refusal, or refusals beyond the per-endpoint receipt budget, which are only counted). Its `failure` is the receipt's own: for an authentication refusal, which check refused it and, when a well-known alternative matches, the `hint` saying what the sender should change; null for other refusals.",
            ),
        }).describe('Requests refused at intake in the same window, by error code, and the newest one.'),
      })
      .describe(
        'The last 24 hours: events received by lifecycle state (`by_state`), and requests refused at intake in the same window by error code (`refused`).',
      ),
  })
  .openapi('Endpoint');
