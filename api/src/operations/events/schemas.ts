// Event read schemas shared by the events operations.
import { z } from '@hono/zod-openapi';
import { REPLAY_UNAVAILABLE_REASONS, RETENTION_STATES } from '../../handoff/lifecycle.ts';
import { EVENT_STATES } from '../../handoff/outcomes.ts';
import { AUTH_MODES } from '../../services/endpoints.ts';
import { Timestamp } from '../read-schemas.ts';

export const ReplayAvailabilitySchema = z
  .object({
    available: z.boolean(),
    reason: z
      .string()
      .nullable()
      .describe(
        `Why not, when unavailable: ${Object.keys(REPLAY_UNAVAILABLE_REASONS)
          .map((r) => `\`${r}\``)
          .join(
            ', ',
          )}. When available but only with an acknowledgement: \`recent_delivery\` (see \`acknowledgements\`).`,
      ),
    detail: z.string().nullable(),
    acknowledgements: z
      .array(z.string())
      .describe(
        'Replay preview body fields that must be `true` for a preview to be accepted now (e.g. `acknowledge_recent_delivery` after a recent delivery, with `reason` `recent_delivery`); empty when none.',
      ),
  })
  .openapi('ReplayAvailability');

export const EventSummary = z
  .object({
    id: z.string().openapi({ example: 'evt_01jd0000000000000000000000' }),
    endpoint_id: z.string(),
    auth_mode: z.enum(AUTH_MODES).describe("The endpoint's auth mode: how the sender's requests are verified."),
    receipt_id: z.string(),
    state: z.enum(EVENT_STATES),
    received_at: Timestamp,
    updated_at: Timestamp,
    delivered_at: Timestamp.nullable(),
    event_type: z.string().nullable(),
    sender: z.string().nullable(),
    external_event_id: z.string().nullable(),
    support_code: z.string().nullable(),
    error_code: z.string().nullable(),
    attempt_count: z.number().int(),
    body_size: z.number().int(),
    body_sha256: z.string(),
    retention_state: z.enum(RETENTION_STATES),
    is_test: z.boolean(),
    replay: ReplayAvailabilitySchema,
    duplicate_of: z.string().nullable(),
    replay_of: z.string().nullable(),
  })
  .openapi('EventSummary');
