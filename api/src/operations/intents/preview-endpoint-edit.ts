// POST /agent/v1/endpoints/{endpoint_id}/edit-intents — preview an endpoint edit.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { TRIGGER_VARIANTS } from '../../store/tables/endpoints.ts';
import { DedupeWindowHours, HmacInput, MappingInput, ToleranceSec } from './preview-endpoint-create.ts';
import { PreviewLifetimeField } from './shared.ts';

export const EndpointEditIntentBody = z
  .strictObject({
    name: z.string().min(1).max(100).optional().describe('New name; omitted keeps the current one.'),
    sender_label: z.string().max(100).optional().describe('New sender label; omitted keeps the current one.'),
    trigger_variant: z
      .enum(TRIGGER_VARIANTS)
      .optional()
      .describe('New Flow trigger for events received from now on; omitted keeps the current one.'),
    hmac: HmacInput.optional().describe('Only for auth_mode hmac_sha256.'),
    tolerance_sec: ToleranceSec.describe(
      'New signature age tolerance in seconds, for timestamped presets; omitted keeps the current one.',
    ),
    dedupe_window_hours: DedupeWindowHours.describe('New dedupe window in hours; omitted keeps the current one.'),

    mapping: MappingInput.optional().describe('Fields given replace the current ones; fields omitted stay.'),
    status: z
      .enum(['active', 'paused'])
      .optional()
      .describe('Pause or resume intake. To archive, use an endpoint delete intent.'),
    ...PreviewLifetimeField,
  })
  .openapi('EndpointEditIntentRequest');
