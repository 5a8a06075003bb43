// POST /agent/v1/endpoints/intents — preview creating an endpoint (a sender lane).
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { AUTH_MODES, MAX_REQUIRED_PATHS, TRIGGER_VARIANTS } from '../../services/endpoints.ts';

export const HmacInput = z
  .strictObject({
    header: z.string().max(100).optional(),
    encoding: z.enum(['hex', 'base64']).optional(),
    prefix: z.string().max(32).optional(),
    timestamp_header: z.string().max(100).nullable().optional(),
    tolerance_sec: z.number().int().min(1).max(3600).optional(),
  })
  .openapi('HmacSettings');

const ExternalId = z.union([
  z.strictObject({ kind: z.literal('preset') }),
  z.strictObject({ kind: z.literal('header'), name: z.string().max(100) }),
  z.strictObject({ kind: z.literal('json'), path: z.string().max(200) }),
  z.strictObject({ kind: z.literal('none') }),
]);

export const MappingInput = z
  .strictObject({
    resource_id_path: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .describe('JSON path of the Shopify resource id (numeric or GID); required for order/customer/product triggers.'),
    related_resource_id_path: z.string().max(200).nullable().optional(),
    required_paths: z.array(z.string().max(200)).max(MAX_REQUIRED_PATHS).optional(),
    external_id: ExternalId.optional().describe('Where the dedupe id comes from (the preset header by default).'),
    event_type_path: z.string().max(200).nullable().optional(),
  })
  .openapi('EndpointMappingInput');

export const EndpointCreateIntentBody = z
  .strictObject({
    name: z.string().min(1).max(100),
    sender_label: z.string().max(100).optional(),
    trigger_variant: z.enum(TRIGGER_VARIANTS),
    auth_mode: z.enum(AUTH_MODES),
    hmac: HmacInput.optional().describe('Only for auth_mode hmac_sha256.'),
    static_header: z.strictObject({ header: z.string().max(100).optional() }).optional(),
    basic: z.strictObject({ username: z.string().max(64).optional() }).optional(),
    tolerance_sec: z.number().int().min(1).max(3600).optional(),
    dedupe_window_hours: z.number().int().min(0).max(720).optional(),
    mapping: MappingInput.optional(),
    secret: z
      .string()
      .min(8)
      .max(512)
      .optional()
      .describe(
        'Import the signing secret the sender generated (Stripe, Shopify, Slack, Svix). Stored encrypted at once; never shown back. Omit to have Flowport generate one.',
      ),
  })
  .openapi('EndpointCreateIntentRequest');
