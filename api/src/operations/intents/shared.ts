// Schemas and helpers shared by the action-intent operations: the one
// ActionIntent resource every preview, read, confirm and cancel returns.
import { z } from '@hono/zod-openapi';
import { ACTIONS } from '../../auth/scopes.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import { INTENT_STATES } from '../../intents/types.ts';

const Actor = z
  .object({
    grant_id: z.string(),
    actor_kind: z.string().nullable().describe('`human` or `agent`'),
    actor_name: z.string().nullable(),
  })
  .nullable();

const Json = z.record(z.string(), z.unknown());

export const BulkReplayProgressSchema = z
  .object({
    total: z.number().int().describe('Events the bulk replay covers (frozen at confirmation).'),
    done: z.number().int().describe('Events handled: replayed, refused or cancelled.'),
    pending: z.number().int(),
    replayed: z.number().int(),
    refused: z.number().int().describe('Refused when their turn came (retention expired meanwhile, a plan cap …).'),
    cancelled: z.number().int().describe('Left pending when the run was cancelled.'),
    refused_by_reason: z.record(z.string(), z.number().int()).describe('Refused events by error code.'),
    rate_per_second: z.number().int().nullable(),
    estimated_seconds_left: z.number().int().nullable(),
  })
  .openapi('BulkReplayProgress');

export const ActionIntentSchema = z
  .object({
    id: z.string().openapi({ example: 'int_01jd5x0k3q8v2m4n6p8r0s2t4v' }),
    object: z.literal('action_intent'),
    kind: z.enum(ACTIONS),
    state: z
      .enum(INTENT_STATES)
      .describe(
        'previewed → confirmed → executed | failed; or refused (at confirmation), expired (preview TTL passed), cancelled.',
      ),
    target: z.object({ type: z.enum(['event', 'endpoint', 'shop']), id: z.string().nullable() }),
    parameters: Json.describe(
      'The parameters the preview was made with. They cannot change: a different request needs a fresh preview.',
    ),
    preview: z.object({
      summary: z.string(),
      target: Json.describe('The target as it was at preview time.'),
      current_config: Json.nullable().describe('Current endpoint configuration, without secrets.'),
      effects: z.array(z.string()).describe('What confirming will change, in order.'),
      warnings: z.array(z.string()),
      details: Json.describe(
        'Kind-specific detail: config diffs, counts of what will be lost, the exact Flow payload, what a share includes and excludes.',
      ),
    }),
    meter_cost: z.object({
      preview: z.number().int(),
      execution: z.number().int(),
      cap: z
        .object({
          meter: z.string(),
          cost: z.number().int(),
          used_at_preview: z.number().int(),
          limit: z.number().int(),
        })
        .nullable()
        .describe('The monthly cap this action also counts against (replays, diagnostics shares).'),
    }),
    preview_scope: z.string(),
    required_scope: z.string().describe('The execute scope a grant needs to confirm this intent.'),
    created_at: z.string(),
    expires_at: z.string().describe('After this moment the intent can no longer be confirmed.'),
    created_by: Actor,
    confirmed_by: Actor,
    confirmed_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    result: Json.nullable().describe(
      'What the execution did. Secrets and share links appear only in the confirmation response (and its idempotent replays), never on later reads.',
    ),
    error_code: z.string().nullable(),
    links: z.object({ self: z.string(), confirm: z.string(), cancel: z.string() }),
    next_step: z.string(),
    progress: BulkReplayProgressSchema.optional().describe(
      'A bulk replay only (on reads of one intent): how far its background run is. Per-event results: `GET /agent/v1/action-intents/{intent_id}/items`.',
    ),
  })
  .openapi('ActionIntent');

export const IntentIdParams = z.object({
  intent_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'intent_id', in: 'path' }, example: 'int_01jd5x0k3q8v2m4n6p8r0s2t4v' }),
});

export const EventIdParams = z.object({
  event_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'event_id', in: 'path' }, example: 'evt_01jd5x0k3q8v2m4n6p8r0s2t4v' }),
});

export const EndpointIdParams = z.object({
  endpoint_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'endpoint_id', in: 'path' }, example: 'ep_01jd5x0k3q8v2m4n6p8r0s2t4v' }),
});

/** Refusals every preview can meet besides its kind's own. */
export const PREVIEW_ERRORS: readonly ErrorCode[] = ['not_found'];

export const PREVIEW_NOTE =
  'Changes nothing: creates an action intent (`int_…`) that states target, current config, effects, warnings, meter cost, required scope and expiry. Confirm it with `POST /agent/v1/action-intents/{intent_id}/confirm`.';

export { callerOf } from '../../intents/preview.ts';
