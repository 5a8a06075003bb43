// Event read schemas shared by the events operations.
import { z } from '@hono/zod-openapi';
import { REPLAY_UNAVAILABLE_REASONS, RETENTION_STATES } from '../../handoff/lifecycle.ts';
import { EVENT_STATES } from '../../handoff/outcomes.ts';
import { AUTH_MODES } from '../../store/tables/endpoints.ts';
import { Timestamp, nullableText, wholeNumber } from '../read-schemas.ts';

/** What an event's `attempt_count` counts (the event and receipt reads say it alike). */
export const ATTEMPT_COUNT_TEXT =
  "Handoff attempts so far: one per `attempt` entry of the event's timeline, including any Flowport decided without calling Flow (`called_flow: false` there, e.g. no enabled workflow uses the trigger).";

export const ReplayAvailabilitySchema = z
  .object({
    available: z.boolean().describe('True when a replay preview can be created for this event now.'),
    reason: z
      .string()
      .nullable()
      .describe(
        `Why not, when unavailable: ${Object.keys(REPLAY_UNAVAILABLE_REASONS)
          .map((r) => `\`${r}\``)
          .join(
            ', ',
          )}. \`already_recovered\` (a replay reached Flow; a preview needs \`acknowledge_recovered: true\`) is unavailable with an acknowledgement that lifts it. When available but only with an acknowledgement: \`recent_delivery\` (see \`acknowledgements\`).`,
      ),
    detail: nullableText('The reason in plain words; null when a replay is available without conditions.'),
    acknowledgements: z
      .array(z.string())
      .describe(
        'Replay preview body fields that must be `true` for a preview to be accepted now (`acknowledge_recovered` for a recovered event, reason `already_recovered`; `acknowledge_recent_delivery` after a recent delivery, reason `recent_delivery`); empty when none.',
      ),
  })
  .openapi('ReplayAvailability');

export const EventSummary = z
  .object({
    id: z.string().openapi({ example: 'evt_01jd0000000000000000000000', description: 'Event id (`evt_…`).' }),
    endpoint_id: z.string().describe('Endpoint that received the event (`ep_…`).'),
    auth_mode: z.enum(AUTH_MODES).describe("The endpoint's auth mode: how the sender's requests are verified."),
    receipt_id: z
      .string()
      .describe('Receipt intake wrote when it accepted the event (`rcpt_…`); read it with getReceipt.'),
    state: z
      .enum(EVENT_STATES)
      .describe(
        'Lifecycle state: `accepted` → `queued` → `delivering` → `delivered`; or `held` (waiting on the shop), `no_workflow` (no workflow took the trigger; `support_code` says how), `failed`, `duplicate_suppressed`. A request intake refused is not an event: list it as a receipt.',
      ),
    received_at: Timestamp.describe('When intake received the event (ISO 8601, UTC).'),
    updated_at: Timestamp.describe('When the state last changed.'),
    delivered_at: Timestamp.nullable().describe('When Flow accepted the event; null until delivered.'),
    event_type: nullableText("Sender's event type, read by the endpoint's mapping; null when none."),
    sender: nullableText(
      "The endpoint's sender label at intake; null when it has none (a label that is only the auth mode names no sender).",
    ),
    external_event_id: nullableText(
      "Sender's own event id (used for dedupe), read by the endpoint's mapping; null when none.",
    ),
    resource_id: nullableText(
      "The Shopify resource id (an order's, customer's or product's) read by the endpoint's `resource_id_path`, as the sender sent it; filter with `resource_id`. Null when the mapping reads none.",
    ),
    related_resource_id: nullableText(
      "A related Shopify resource id read by the endpoint's `related_resource_id_path`; null when none.",
    ),
    support_code: nullableText(
      'Short code naming where the event stopped, to quote to support; null when it went through.',
    ),
    error_code: nullableText('Catalog error code of the last failure (see the error pages); null when none.'),
    attempt_count: wholeNumber(ATTEMPT_COUNT_TEXT),
    body_size: wholeNumber('Size of the request body in bytes.'),
    body_sha256: z.string().describe('SHA-256 of the request body (hex); compare with your copy without sending it.'),
    retention_state: z
      .enum(RETENTION_STATES)
      .describe('`retained` (body kept), `expired` (purged after the retention period), `not_retained` or `erased`.'),
    is_test: z.boolean().describe('True for a test event sent through a test-event intent.'),
    replay: ReplayAvailabilitySchema.describe('Whether the event can be replayed now.'),
    duplicate_of: nullableText('For `duplicate_suppressed`: the event it duplicates; null otherwise.'),
    replay_of: nullableText('For a replay: the event it replays; null otherwise.'),
    replayed_by: z
      .array(
        z.object({
          id: z.string().describe('Id of the replay event (`evt_…`).'),
          state: z.enum(EVENT_STATES).describe('State of the replay event now.'),
          received_at: Timestamp.describe('When the replay was created.'),
          delivered_at: Timestamp.nullable().describe('When Flow accepted the replay; null until delivered.'),
        }),
      )
      .describe('Replays of this event (direct ones; a replay lists its own), oldest first; empty when none.'),
    recovered_by: nullableText(
      'The replay (`evt_…`) that recovered this event: the first replay of the same sender event (of this event, or of a replay of it, at any depth) Flow accepted. Null when none reached Flow, and for that replay itself. A recovered event is not replayable without `acknowledge_recovered` (`replay.reason` `already_recovered`); filter with `recovered=true|false`.',
    ),
    recovered_at: Timestamp.nullable().describe(
      'When Flow accepted the replay in `recovered_by`; null when not recovered.',
    ),
  })
  .openapi('EventSummary');
