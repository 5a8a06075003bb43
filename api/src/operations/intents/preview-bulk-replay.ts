// POST /agent/v1/bulk-replay-intents — preview replaying every event a filter matches: count,
// meter cost against the plan, a sample, what would be refused and why, estimated duration.
import { z } from '@hono/zod-openapi';
import { previewIntent } from '../../intents/engine.ts';
import { BULK_REPLAY_MAX_EVENTS, BULK_REPLAY_STATES } from '../../intents/kinds/bulk-replay.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { ActionIntentSchema, callerOf, PREVIEW_ERRORS, PREVIEW_NOTE } from './shared.ts';

const DateTime = z.string().max(40).datetime({ offset: true });

export const BulkReplayIntentBody = z
  .object({
    state: z.enum(BULK_REPLAY_STATES).optional().describe('Events in this state (default `failed`).'),
    endpoint_id: z.string().max(64).optional().describe('Only events of this endpoint.'),
    received_after: DateTime.optional().describe('Only events received at or after this moment.'),
    received_before: DateTime.optional().describe('Only events received before this moment.'),
    error_code: z.string().max(64).optional().describe('Only events whose last error has this code.'),
    no_workflow_since: DateTime.optional().describe(
      'Events that ended `no_workflow` received at or after this moment (when the workflow was off); implies state `no_workflow`.',
    ),
    acknowledge_recent_delivery: z
      .boolean()
      .optional()
      .describe('Include events delivered to Flow minutes ago (otherwise refused as recent deliveries).'),
    note: z.string().max(500).optional().describe('Why (kept with the audit entries).'),
  })
  .strict()
  .openapi('BulkReplayIntentRequest');

export const previewBulkReplay = defineOperation({
  operationId: 'createBulkReplayIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/bulk-replay-intents`,
  summary: 'Preview a bulk replay',
  description: `Finds every event matching the filter (at most ${BULK_REPLAY_MAX_EVENTS}) and previews replaying them: the count, the meter cost against the plan, a sample of event ids, the events that would be refused by reason (retention expired, recent delivery, endpoint deleted or archived, already replayed), and the estimated duration under Shopify's rate limit. Confirmation runs the replays in the background at a bounded rate; read the intent for progress, cancel it to stop. ${PREVIEW_NOTE}`,
  family: 'recovery',
  kind: 'preview',
  scope: 'bulk_replay:preview',
  meter: 'preview',
  openWorld: true,
  request: { body: BulkReplayIntentBody },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [...PREVIEW_ERRORS, 'bulk_replay_no_events', 'bulk_replay_too_large', 'replay_limit_reached'],
  mcp: {
    name: 'preview_bulk_replay',
    title: 'Preview replaying many events at once',
    description:
      'Prepare to replay every event matching a filter (state, endpoint, time window, error code, no_workflow since a moment), for example after an outage. Shows how many, the plan cost, a sample, what would be refused and why, and how long it takes; nothing is replayed until confirmed.',
  },
  cli: ['replay', 'bulk'],
  async run({ ctx, input }) {
    return previewIntent(callerOf(ctx), 'bulk_replay', null, input);
  },
});
