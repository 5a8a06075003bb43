// POST /agent/v1/events/{eventId}/replay-intents — preview a replay of one event
// (the spec's path). Confirmation creates a new event linked by `replay_of`.
import { z } from '@hono/zod-openapi';
import { previewIntent } from '../../intents/engine.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { ActionIntentSchema, callerOf, PREVIEW_ERRORS, PREVIEW_NOTE } from './shared.ts';
import { defineOperation } from '../../core/types.ts';

export const ReplayIntentBody = z
  .object({
    acknowledge_recent_delivery: z
      .boolean()
      .optional()
      .describe(
        'Required (true) when the event or a replay of it was delivered to Flow within the last few minutes: Flow has no idempotency, so a replay repeats its side effects.',
      ),
    payload_override: z
      .unknown()
      .optional()
      .describe(
        'Not supported: Flowport replays the exact bytes it received. Sending it is refused (product boundary).',
      ),
    note: z.string().max(500).optional().describe('Why you are replaying; kept with the intent and in the audit log.'),
  })
  .openapi('ReplayIntentRequest');

export const previewReplay = defineOperation({
  operationId: 'createReplayIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/events/{eventId}/replay-intents`,
  summary: 'Preview a replay of one event',
  description: `Shows the original event, its endpoint's current config against the version it was first processed with, Flow readiness, retention, possible duplicate side effects in Flow and the meter cost. ${PREVIEW_NOTE}`,
  family: 'recovery',
  kind: 'preview',
  scope: 'replay:preview',
  meter: 'preview',
  openWorld: true,
  request: {
    params: z.object({
      eventId: z
        .string()
        .min(1)
        .max(64)
        .openapi({ param: { name: 'eventId', in: 'path' }, example: 'evt_01jd5x0k3q8v2m4n6p8r0s2t4v' }),
    }),
    body: ReplayIntentBody,
  },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [
    ...PREVIEW_ERRORS,
    'event_rejected',
    'event_in_flight',
    'event_not_replayable',
    'retention_expired',
    'event_erased',
    'endpoint_archived',
    'replay_limit_reached',
    'replay_recent_delivery',
    'outside_product_boundary',
  ],
  mcp: {
    name: 'preview_event_replay',
    title: 'Preview replaying an event',
    description:
      'Prepare to hand one event to Shopify Flow again. Returns a preview (what will run, warnings about repeating Flow side effects, cost) and an intent id; nothing runs until the intent is confirmed with confirm_action_intent.',
  },
  cli: ['replay'],
  async run({ ctx, input }) {
    const { eventId, ...params } = input;
    return previewIntent(callerOf(ctx), 'replay', eventId, params);
  },
});
