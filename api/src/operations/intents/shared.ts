// Schemas and helpers shared by the action-intent operations: the one
// ActionIntent resource every preview, read, confirm and cancel returns.
import { z } from '@hono/zod-openapi';
import { ACTIONS } from '../../auth/scopes.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import { PREVIEW_LIFETIME } from '../../config.ts';
import { INTENT_STATES } from '../../intents/types.ts';
import { idPathParam, nullableText, wholeNumber } from '../read-schemas.ts';

const Actor = z
  .object({
    grant_id: z.string().describe('Grant that acted (`grt_…`).'),
    actor_kind: nullableText('`human` or `agent`'),
    actor_name: nullableText("The grant's actor name; null when the grant is gone."),
  })
  .nullable();

const Json = z.record(z.string(), z.unknown());

export const BulkReplayProgressSchema = z
  .object({
    total: wholeNumber('Events the bulk replay covers (frozen at confirmation).'),
    done: wholeNumber('Events handled: replayed, refused or cancelled.'),
    pending: wholeNumber('Events not handled yet.'),
    replayed: wholeNumber('Events replayed (a new replay event was created for each).'),
    refused: wholeNumber('Refused when their turn came (retention expired meanwhile, a plan cap …).'),
    cancelled: wholeNumber('Left pending when the run was cancelled.'),
    refused_by_reason: z.record(z.string(), z.number().int()).describe('Refused events by error code.'),
    replays_by_state: z
      .record(z.string(), z.number().int())
      .describe(
        'The replays made so far, by each replay event\'s state now (e.g. `{"delivered": 4, "queued": 1}`): `delivered` once Flow accepted one. The run is `executed` when every event is handled, which can be before Flow has taken every replay; the items\' `replay_state` says it event by event.',
      ),
    rate_per_second: z
      .number()
      .int()
      .nullable()
      .describe('Events handled per second at the current pace; null before the run has started.'),
    estimated_seconds_left: z
      .number()
      .int()
      .nullable()
      .describe('Estimated seconds until every event is handled, from `pending` and the rate; null when unknown.'),
  })
  .openapi('BulkReplayProgress');

export const ActionIntentSchema = z
  .object({
    id: z.string().openapi({ example: 'int_01jd5x0k3q8v2m4n6p8r0s2t4v', description: 'Action intent id (`int_…`).' }),
    object: z.literal('action_intent').describe('Object type, always `action_intent`.'),
    kind: z.enum(ACTIONS).describe('What confirming the intent will do (e.g. `replay`, `endpoint_create`).'),
    state: z
      .enum(INTENT_STATES)
      .describe(
        'previewed → confirmed → executed | failed; or refused (at confirmation), expired (preview TTL passed), cancelled.',
      ),
    target: z
      .object({
        type: z
          .enum(['event', 'endpoint', 'shop', 'alert_subscription'])
          .describe('Kind of object the action is about.'),
        id: nullableText('Its id; null for shop-wide actions (e.g. creating an endpoint).'),
      })
      .describe('What the action acts on.'),
    parameters: Json.describe(
      'The parameters the preview was made with. They cannot change: a different request needs a fresh preview.',
    ),
    preview: z
      .object({
        summary: z.string().describe('What confirming will do, in one sentence.'),
        target: Json.describe('The target as it was at preview time.'),
        current_config: Json.nullable().describe('Current endpoint configuration, without secrets.'),
        effects: z.array(z.string()).describe('What confirming will change, in order.'),
        warnings: z
          .array(z.string())
          .describe('Risks to weigh before confirming (e.g. a recent delivery); empty when none.'),
        details: Json.describe(
          'Kind-specific detail: config diffs, counts of what will be lost, the exact Flow payload, what a share includes and excludes.',
        ),
      })
      .describe('What the action will do, computed at preview time from the current state.'),
    meter_cost: z
      .object({
        preview: wholeNumber('Units the preview counted against the `preview` meter.'),
        execution: wholeNumber(
          'Units the action counts against the `execution` meter: 1 for the confirmation, plus 1 per replay a bulk replay makes.',
        ),
        replays: wholeNumber(
          'Units it counts against the monthly `replays` cap: 1 for a replay, 1 per event for a bulk replay.',
        ),
        diagnostics_shares: wholeNumber(
          'Units it counts against the monthly `diagnostics_shares` cap (1 for a diagnostics share).',
        ),
        cap: z
          .object({
            meter: z.string().describe('Meter name (e.g. `replays`).'),
            cost: wholeNumber('Units confirming will use on it (the same number as the field named by `meter`).'),
            used_at_preview: wholeNumber('Units already used this period when the preview was made.'),
            limit: wholeNumber("The plan's cap for this period."),
          })
          .nullable()
          .describe(
            "The monthly cap the confirmation itself counts against (replays, diagnostics shares), with its use at preview. Null for a bulk replay: its replays are counted one by one as they are made (see `replays` and the preview's details.meter).",
          ),
      })
      .describe(
        "What the action costs in plan usage, as its kind states it once (a bulk replay's details.meter shows the same numbers).",
      ),
    preview_scope: z.string().describe('The scope that allowed the preview.'),
    required_scope: z.string().describe('The execute scope a grant needs to confirm this intent.'),
    created_at: z.string().describe('When the intent was previewed (ISO 8601, UTC).'),
    expires_at: z
      .string()
      .describe(
        'After this moment the intent can no longer be confirmed: `created_at` plus the preview lifetime (15 minutes by default; a preview may ask for up to 24 h with `expires_in_seconds`).',
      ),
    created_by: Actor.describe('Grant that made the preview.'),
    confirmed_by: Actor.describe('Grant that confirmed it; null until confirmed.'),
    confirmed_at: nullableText('When it was confirmed (ISO 8601, UTC); null until then.'),
    finished_at: nullableText('When the execution ended (executed or failed); null while previewed or running.'),
    result: Json.nullable().describe(
      'What the execution did. Secrets and share links appear only in the confirmation response (and its idempotent replays), never on later reads.',
    ),
    error_code: nullableText('Catalog error code when refused at confirmation or failed; null otherwise.'),
    links: z
      .object({
        self: z.string().describe('Path to read the intent.'),
        confirm: z.string().describe('Path to confirm it (POST with an `Idempotency-Key` header).'),
        cancel: z.string().describe('Path to cancel it (POST).'),
      })
      .describe(
        'Paths of the next calls, relative to the base URL you called (e.g. `/agent/v1/action-intents/int_…/confirm`).',
      ),
    next_step: z.string().describe('What to do next, in one sentence (e.g. confirm with the `confirm` link).'),

    progress: BulkReplayProgressSchema.optional().describe(
      'A bulk replay only (on reads of one intent): how far its background run is. Per-event results: `GET /agent/v1/action-intents/{intent_id}/items`.',
    ),
  })
  .openapi('ActionIntent');

export const IntentIdParams = idPathParam(
  'intent_id',
  'int_01jd5x0k3q8v2m4n6p8r0s2t4v',
  'Action intent id (`int_…`), from the preview response.',
);

export const EventIdParams = idPathParam('event_id', 'evt_01jd5x0k3q8v2m4n6p8r0s2t4v', 'Event id (`evt_…`).');

export const EndpointIdParams = idPathParam('endpoint_id', 'ep_01jd5x0k3q8v2m4n6p8r0s2t4v', 'Endpoint id (`ep_…`).');

export const SubscriptionIdParams = idPathParam(
  'subscription_id',
  'alrt_01jd5x0k3q8v2m4n6p8r0s2t4v',
  'Alert subscription id (`alrt_…`), from the subscription list.',
);

/** Why one event cannot be replayed now: checked by a replay's preview and again at its confirmation. */
export const EVENT_REPLAY_REFUSALS = [
  'event_rejected',
  'event_in_flight',
  'event_held',
  'event_not_replayable',
  'retention_expired',
  'event_erased',
  'endpoint_archived',
] as const satisfies readonly ErrorCode[];

/** Refusals every preview can meet besides its kind's own. */
export const PREVIEW_ERRORS: readonly ErrorCode[] = ['not_found'];

/** The body field every preview kind shares: how long the preview stays confirmable (api/src/intents/preview.ts). */
export const PreviewLifetimeField = {
  [PREVIEW_LIFETIME.field]: z
    .number()
    .optional()
    .openapi({
      minimum: PREVIEW_LIFETIME.minSeconds,
      maximum: PREVIEW_LIFETIME.maxSeconds,
      example: 4 * 3600,
      description: `How long the preview stays confirmable, in whole seconds (${PREVIEW_LIFETIME.minSeconds}–${PREVIEW_LIFETIME.maxSeconds}, up to 24 h); default 900 (15 minutes, the manifest's \`action_intents.preview_lifetime_seconds\`). Ask for longer to prepare an action and wait for the merchant to confirm it. Out of range: \`preview_lifetime_out_of_range\`. Not a parameter of the action: \`expires_at\` says the result.`,
    }),
};

export const PREVIEW_NOTE =
  'Changes nothing: creates an action intent (`int_…`) that states target, current config, effects, warnings, meter cost, required scope and expiry. Confirm it with `POST /agent/v1/action-intents/{intent_id}/confirm`.';
