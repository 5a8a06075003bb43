// POST /agent/v1/endpoints/intents — preview creating an endpoint (a sender lane).
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { MAX_DEDUPE_WINDOW_HOURS, MAX_REQUIRED_PATHS, MAX_TOLERANCE_SEC } from '../../services/endpoints.ts';
import { AUTH_MODES, TRIGGER_VARIANTS } from '../../store/tables/endpoints.ts';
import { PreviewLifetimeField } from './shared.ts';

/** An endpoint's signature age tolerance in seconds, as every endpoint body takes it. */
export const ToleranceSec = z.number().int().min(1).max(MAX_TOLERANCE_SEC).optional();

/** An endpoint's dedupe window in hours, as every endpoint body takes it. */
export const DedupeWindowHours = z.number().int().min(0).max(MAX_DEDUPE_WINDOW_HOURS).optional();

export const HmacInput = z
  .strictObject({
    header: z.string().max(100).optional().describe('Header carrying the signature (default `x-flowport-signature`).'),
    encoding: z.enum(['hex', 'base64']).optional().describe('Encoding of the HMAC-SHA256 digest (default `hex`).'),
    prefix: z
      .string()
      .max(32)
      .optional()
      .describe('Text before the digest in the header (default `sha256=`; empty for none).'),
    timestamp_header: z
      .string()
      .max(100)
      .nullable()
      .optional()
      .describe(
        'Header with a Unix timestamp that is signed along with the body and checked against `tolerance_sec`; null (the default) for none.',
      ),
    tolerance_sec: ToleranceSec.describe('How old a signed timestamp may be, in seconds (default 300).'),
  })
  .openapi('HmacSettings');

const ExternalId = z.union([
  z.strictObject({
    kind: z.literal('preset').describe("The auth mode's own delivery-id header (e.g. Stripe's event id)."),
  }),
  z.strictObject({
    kind: z.literal('header').describe('A request header.'),
    name: z.string().max(100).describe('Name of the header holding the id.'),
  }),
  z.strictObject({
    kind: z.literal('json').describe('A field of the JSON body.'),
    path: z.string().max(200).describe('JSON path of the field holding the id (e.g. `$.id`).'),
  }),
  z.strictObject({ kind: z.literal('none').describe('No dedupe: every request is a new event.') }),
]);

export const MappingInput = z
  .strictObject({
    resource_id_path: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .describe('JSON path of the Shopify resource id (numeric or GID); required for order/customer/product triggers.'),
    related_resource_id_path: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .describe('JSON path of a second, related resource id passed to Flow; null or omitted for none.'),
    required_paths: z
      .array(z.string().max(200))
      .max(MAX_REQUIRED_PATHS)
      .optional()
      .describe(
        `JSON paths that must be present in the body, else intake refuses the event (at most ${MAX_REQUIRED_PATHS}).`,
      ),
    external_id: ExternalId.optional().describe('Where the dedupe id comes from (the preset header by default).'),
    event_type_path: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .describe("JSON path of the sender's event type (shown on events and passed to Flow); null for none."),
  })
  .openapi('EndpointMappingInput');

export const EndpointCreateIntentBody = z
  .strictObject({
    name: z.string().min(1).max(100).describe('Name for the endpoint, shown in the docs, CLI and audit log.'),
    sender_label: z.string().max(100).optional().describe('Who will send to it (free text, e.g. `Stripe`).'),
    trigger_variant: z
      .enum(TRIGGER_VARIANTS)
      .describe('Flow trigger its events go to; order, customer and product triggers need `mapping.resource_id_path`.'),
    auth_mode: z
      .enum(AUTH_MODES)
      .describe('How senders are verified: a preset for a known sender, `hmac_sha256`, `static_header` or `basic`.'),
    hmac: HmacInput.optional().describe('Only for auth_mode hmac_sha256.'),
    static_header: z
      .strictObject({
        header: z
          .string()
          .max(100)
          .optional()
          .describe(
            'Header whose value must equal the secret (not `Authorization` or `Content-Type`); default `x-flowport-token`.',
          ),
      })
      .optional()
      .describe('Only for auth_mode static_header.'),
    basic: z
      .strictObject({
        username: z
          .string()
          .max(64)
          .optional()
          .describe('User name (letters, digits, `.`, `_`, `-`); generated when omitted. The password is the secret.'),
      })
      .optional()
      .describe('Only for auth_mode basic.'),
    tolerance_sec: ToleranceSec.describe(
      'For timestamped presets (`stripe`, `standard_webhooks`, `slack`): how old a signature may be, in seconds (default 300).',
    ),
    dedupe_window_hours: DedupeWindowHours.describe(
      "Hours a repeated sender event id is suppressed as a duplicate (the plan's window caps it).",
    ),
    mapping: MappingInput.optional().describe('How to read ids, event type and required fields from the body.'),

    secret: z
      .string()
      .min(8)
      .max(512)
      .optional()
      .describe(
        'Import the signing secret the sender generated (Stripe, Shopify, Slack, Svix). Stored encrypted at once; never shown back. Omit to have Flowport generate one.',
      ),
    ...PreviewLifetimeField,
  })
  .openapi('EndpointCreateIntentRequest');
