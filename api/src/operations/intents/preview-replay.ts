// POST /agent/v1/events/{event_id}/replay-intents — preview a replay of one event
// (the spec's path). Confirmation creates a new event linked by `replay_of`.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { PreviewLifetimeField } from './shared.ts';

export const ReplayIntentBody = z
  .strictObject({
    acknowledge_recent_delivery: z
      .boolean()
      .optional()
      .describe(
        'Required (true) when the event or a replay of it was delivered to Flow within the last few minutes: Flow has no idempotency, so a replay repeats its side effects.',
      ),
    acknowledge_recovered: z
      .boolean()
      .optional()
      .describe(
        'Required (true) to replay a recovered event (`recovered_by` set: a replay of it already reached Flow); otherwise refused with `event_already_recovered`. Flow has no idempotency, so the workflow runs again.',
      ),
    payload_override: z
      .unknown()
      .optional()
      .describe(
        'Not supported: Flowport replays the exact bytes it received. Sending it is refused (product boundary).',
      ),
    note: z.string().max(500).optional().describe('Why you are replaying; kept with the intent and in the audit log.'),
    ...PreviewLifetimeField,
  })
  .openapi('ReplayIntentRequest');
