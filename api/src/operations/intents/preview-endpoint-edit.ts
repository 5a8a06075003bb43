// POST /agent/v1/endpoints/{endpoint_id}/edit-intents — preview an endpoint edit.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { TRIGGER_VARIANTS } from '../../services/endpoints.ts';
import { HmacInput, MappingInput } from './preview-endpoint-create.ts';

export const EndpointEditIntentBody = z
  .strictObject({
    name: z.string().min(1).max(100).optional(),
    sender_label: z.string().max(100).optional(),
    trigger_variant: z.enum(TRIGGER_VARIANTS).optional(),
    hmac: HmacInput.optional(),
    tolerance_sec: z.number().int().min(1).max(3600).optional(),
    dedupe_window_hours: z.number().int().min(0).max(720).optional(),
    mapping: MappingInput.optional().describe('Fields given replace the current ones; fields omitted stay.'),
    status: z
      .enum(['active', 'paused'])
      .optional()
      .describe('Pause or resume intake. To archive, use an endpoint delete intent.'),
  })
  .openapi('EndpointEditIntentRequest');
