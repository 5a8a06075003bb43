import { z } from '@hono/zod-openapi';
import { Timestamp } from '../read-schemas.ts';

export const EndpointView = z
  .object({
    id: z.string().openapi({ example: 'ep_01jd0000000000000000000000' }),
    name: z.string(),
    sender_label: z.string(),
    trigger_variant: z.string(),
    auth_mode: z.string(),
    status: z.enum(['active', 'paused', 'archived', 'deleted']),
    config_version: z.number().int(),
    config: z
      .record(z.string(), z.unknown())
      .describe(
        'Non-secret configuration: auth parameters (header names, encodings, tolerance), mapping, dedupe window.',
      ),
    secret: z.object({
      configured: z.boolean(),
      last4: z
        .string()
        .nullable()
        .describe('Last 4 characters of the signing secret. The secret itself is shown once, on create or rotate.'),
      previous_secret_valid_until: Timestamp.nullable().describe(
        'While a rotation overlap runs, the previous secret stays valid until then.',
      ),
    }),
    ingest_url: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    archived_at: Timestamp.nullable(),
    deleted_at: Timestamp.nullable(),
    recent: z
      .object({ window_hours: z.number().int(), by_state: z.record(z.string(), z.number().int()) })
      .describe('Events received in the last 24 hours, by lifecycle state.'),
  })
  .openapi('Endpoint');
