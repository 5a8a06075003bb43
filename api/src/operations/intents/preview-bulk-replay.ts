// POST /agent/v1/bulk-replay-intents — preview replaying every event a filter matches: count,
// meter cost against the plan, a sample, what would be refused and why, estimated duration.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { BULK_REPLAY_STATES } from '../../intents/kinds/bulk-replay.ts';
import { PreviewLifetimeField } from './shared.ts';

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
    no_workflow_until: DateTime.optional().describe(
      "The end of the `no_workflow_since` window: only events received before it; implies state `no_workflow`. Default: when Flow's trigger lifecycle callback said an enabled workflow uses the triggers again (`details.no_workflow_window`, `until_source` `flow_lifecycle`); open while it has not.",
    ),
    acknowledge_recent_delivery: z
      .boolean()
      .optional()
      .describe('Include events delivered to Flow minutes ago (otherwise refused as recent deliveries).'),
    acknowledge_recovered: z
      .boolean()
      .optional()
      .describe(
        'Include recovered events (a replay of each already reached Flow: `recovered_by` set). Left out otherwise, and counted in `details.excluded.recovered`.',
      ),
    note: z.string().max(500).optional().describe('Why (kept with the audit entries).'),
    ...PreviewLifetimeField,
  })
  .strict()
  .openapi('BulkReplayIntentRequest');
