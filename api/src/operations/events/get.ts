// GET /agent/v1/events/{event_id} — one event's lifecycle: timeline with every
// attempt, where the handoff stopped, recovery options (each with its docs
// page), retention and replay availability. Never the payload body.
import { z } from '@hono/zod-openapi';
import { RETENTION_STATES } from '../../handoff/lifecycle.ts';
import { idPathParam, Timestamp, nullableText, wholeNumber } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { EventSummary } from './schemas.ts';
import { readEvent } from '../../reads/event-detail.ts';

export const EventIdParam = idPathParam('event_id', 'evt_01jd0000000000000000000000', 'Event id (`evt_…`).');

const TimelineEntry = z
  .object({
    at: Timestamp.describe('When it happened (ISO 8601, UTC).'),
    kind: z
      .enum(['received', 'attempt', 'delivered', 'replayed', 'retention'])
      .describe('What happened: received by intake, a delivery attempt, delivered, replayed, or a retention change.'),
    summary: z.string().describe('One plain sentence describing the entry.'),
    attempt: z
      .object({
        id: z.string().describe('Attempt id.'),
        trigger: z.string().describe('`initial`, `automatic` (retry), `replay` or `test`.'),
        outcome: z.string().describe('How the attempt ended (e.g. `delivered`, `retryable_error`, `failed`).'),
        started_at: Timestamp.describe(
          'When the attempt started (`finished_at` − `duration_ms` once it ended; while in flight, when a worker claimed the event for it).',
        ),
        finished_at: Timestamp.nullable().describe('When it ended; null while in flight.'),
        duration_ms: z
          .number()
          .int()
          .nullable()
          .describe(
            'How long the call took, in milliseconds: always `finished_at` − `started_at`; null while in flight (or when the attempt was abandoned by a worker that stopped mid-call).',
          ),
        http_status: z
          .number()
          .int()
          .nullable()
          .describe("HTTP status of Flow's answer; null when there was none (e.g. a timeout)."),
        error_code: nullableText('Catalog error code when the attempt failed; null otherwise.'),
        called_flow: z
          .boolean()
          .describe(
            "Whether this attempt called Shopify Flow. `false` when Flowport decided the outcome without a call (`local_check` says why: the payload could not be built, it is over Flow's size limit, or Flow said no enabled workflow uses the trigger); such an attempt cannot have started a workflow run. An attempt whose answer never came (a timeout) did call.",
          ),
        local_check: nullableText(
          'Only when `called_flow` is false: what Flowport checked instead of calling Flow. Null otherwise.',
        ),
        flow_response: nullableText(
          "Flow's answer (userErrors messages), never tokens; null when there was none (no call, or no answer).",
        ),
      })
      .optional()
      .describe('Only for `attempt` entries: the delivery attempt.'),
  })
  .openapi('EventTimelineEntry');

export const EventDetail = EventSummary.extend({
  state_description: z.string().describe('What the state means for this event, in plain words.'),
  endpoint: z
    .object({
      id: z.string().describe('Endpoint id (`ep_…`).'),
      name: z.string().describe('Endpoint name.'),
      status: z.string().describe('Endpoint status now (`active`, `paused`, `archived` or `deleted`).'),
      config_version: wholeNumber("The endpoint's configuration version now (the receipt has the one at intake)."),
    })
    .describe('The endpoint that received the event, as it is now.'),
  handoff: z
    .object({
      stage: z
        .enum(['intake', 'queue', 'flow', 'done'])
        .describe('Where the handoff is: at intake, waiting in the queue, with Flow, or done.'),
      explanation: z.string().describe('Why the event is where it is, and what happens next.'),
      next_attempt_at: Timestamp.nullable().describe(
        'When the next delivery attempt is due; null when none is planned.',
      ),
      possible_duplicate_deliveries: wholeNumber(
        'Attempts whose outcome is unknown (e.g. timed out), so Flow may have run the workflow more than once.',
      ),
      sender_event: z
        .object({
          original_id: z.string().describe('The event the sender sent first: the root of this replay family.'),
          flow_deliveries: wholeNumber(
            'How many times Flow accepted this sender event: the original and every replay of it, at any depth.',
          ),
          delivered_event_ids: z.array(z.string()).describe('The events of the family Flow accepted, oldest first.'),
          possible_duplicate_deliveries: wholeNumber(
            'Calls of the family whose outcome is unknown (timeouts, broken connections): Flow may have run them too.',
          ),
          suppressed_duplicates: z
            .object({
              count: wholeNumber(
                'Copies the sender sent again that intake suppressed as duplicates (never sent to Flow).',
              ),
              event_ids: z.array(z.string()).describe('The first 20 of them, oldest first.'),
            })
            .describe('Copies intake recognised by the external event id and did not deliver.'),
          summary: z.string().describe('The same facts in one sentence, to quote.'),
        })
        .describe(
          'The sender event as a whole (its original, replays and suppressed duplicates): answers "did Flow get this twice?" in one read.',
        ),
      hold: z
        .object({
          reason: z
            .string()
            .describe(
              'The shop status it is held for: `disconnected`, `uninstalled`, or a status Shopify refuses the store with (`frozen`, `locked`, `access_denied`, `not_found`).',
            ),
          why: z.string().describe('Why the shop cannot take deliveries, in plain words.'),
          release: z.string().describe('What releases it (a probe Shopify accepts, a reconnect, a reinstall).'),
          next_probe_at: Timestamp.nullable().describe(
            "When Flowport next sends one held event to Shopify as a probe (the same time setup's `shop.next_probe_at` shows); null when no probe is planned (a human releases the hold: reconnect or reinstall).",
          ),
          release_by: Timestamp.nullable().describe(
            "The hold must end by this time (the body's expiry, `retention.body_expires_at`) for the event to be delivered; null when the body is no longer stored.",
          ),
          after_release_by: z.string().describe('What happens to the event if the hold has not ended by `release_by`.'),
        })
        .nullable()
        .describe(
          'Only for a `held` event: why it is held, the next probe, and by when it must be released; null otherwise.',
        ),
    })
    .describe('Where the handoff to Flow stands.'),
  timeline: z.array(TimelineEntry).describe('Everything that happened to the event, oldest first.'),
  recovery_options: z
    .array(
      z.object({
        action: z
          .string()
          .describe(
            "Recovery action, the right move first: `inspect_recovery` (a recovered event: read the replay that reached Flow), `verify_in_flow` (a delivered event: check the run in Shopify Flow), `deploy_trigger_and_workflow` (no enabled workflow uses the trigger, as Flow last said), `wait`, a held shop's action (e.g. `reconnect_shop`), `inspect_original`, `replay`, `share_diagnostics`, `read_error_docs`.",
          ),
        available: z.boolean().describe('True when the action can be taken now.'),
        description: z.string().describe('What the action does, and why it is or is not available.'),
        docs_url: z.string().describe('Docs page for the action.'),
        required_scope: nullableText('Scope a grant needs for the action; null when none.'),
        operation: nullableText(
          'The `operationId` of the call that starts the action (e.g. `previewReplay`; its MCP tool and CLI command share the name); null when it is not an API call. For `inspect_original` it is `getEvent` on `duplicate_of`, for `inspect_recovery` `getEvent` on `recovered_by`.',
        ),
      }),
    )
    .describe('What can be done about the event, each with its docs page.'),
  retention: z
    .object({
      state: z.enum(RETENTION_STATES).describe('`retained`, `expired`, `not_retained` or `erased`.'),
      body_retained: z.boolean().describe('True while the body is stored (needed for a replay).'),
      body_expires_at: Timestamp.nullable().describe('When the body will be purged; null when it is no longer stored.'),
      plan_retention_days: wholeNumber("Body retention of the shop's plan, in days."),
      docs_url: z.string().describe('Docs page on retention.'),
    })
    .describe('How long the body is kept.'),
  payload: z
    .object({
      returned: z.literal(false).describe('Always false: the API never returns payload bodies.'),
      note: z.string().describe('Why the body is not returned and how to compare it (`body_sha256`).'),
    })
    .describe('The payload is never returned.'),
}).openapi('EventDetail');

export const getEvent = defineRead({
  name: 'get_event',
  path: '/events/{event_id}',
  summary: 'Read one event',
  description:
    "One event's lifecycle: timeline with every delivery attempt, where the handoff stopped, recovery options (each with its docs page and required scope), retention and replay availability. The payload body is never returned; its size and SHA-256 are.",
  family: 'events',
  scope: 'events:read',
  meter: 'rich_read',
  request: { params: EventIdParam },
  response: EventDetail,
  errors: ['not_found'],
  mcp: {
    title: 'Investigate one event',
    description:
      'Find out what happened to one event: every delivery attempt, where the handoff to Shopify Flow stopped, and what can be done now (replay, wait, fix the sender, deploy a workflow), with the docs page for each option.',
  },
  run: async ({ ctx, input }) => readEvent({ ctx, input }),
});
