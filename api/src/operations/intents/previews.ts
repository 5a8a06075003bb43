// The preview operations, declared from one table. Every preview is the same contract:
// POST a body (and, for most, the target's id in the path), get back a 201 action intent
// that changes nothing until it is confirmed; the run is one call into the preview verb
// (api/src/intents/preview.ts). What differs per kind is in its row: path, target, body schema
// (in ./preview-<kind>.ts), scope, refusals and the MCP tool's title and description. Its
// operationId, MCP tool name and CLI command are spelled from `preview_<kind>` (../naming.ts).
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { type AnyOperation, defineOperation, type Family, type OperationRequest } from '../../core/types.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import { previewAction } from '../../intents/preview.ts';
import type { IntentKind } from '../../intents/types.ts';
import type { z } from '@hono/zod-openapi';
import { DiagnosticsShareIntentBody } from './preview-diagnostics-share.ts';
import { EndpointCreateIntentBody } from './preview-endpoint-create.ts';
import { EndpointDeleteIntentBody } from './preview-endpoint-delete.ts';
import { EndpointEditIntentBody } from './preview-endpoint-edit.ts';
import { ReplayIntentBody } from './preview-replay.ts';
import { SecretRotationIntentBody } from './preview-secret-rotate.ts';
import { TestEventIntentBody } from './preview-test-event.ts';
import { AlertSubscriptionIntentBody } from './preview-alert-subscribe.ts';
import { AlertUnsubscribeIntentBody } from './preview-alert-unsubscribe.ts';
import { BulkReplayIntentBody } from './preview-bulk-replay.ts';
import { BULK_REPLAY_MAX_EVENTS } from '../../intents/kinds/bulk-replay.ts';
import { cliWordsFor, operationIdFor } from '../naming.ts';
import {
  ActionIntentSchema,
  EndpointIdParams,
  EVENT_REPLAY_REFUSALS,
  EventIdParams,
  PREVIEW_ERRORS,
  PREVIEW_NOTE,
  SubscriptionIdParams,
} from './shared.ts';

interface PreviewRow {
  /** The intent kind the preview records. */
  intent: IntentKind;
  /** The path parameter naming the target, or null when the kind has none in the path. */
  target: 'event_id' | 'endpoint_id' | 'subscription_id' | null;
  /** The request body (./preview-<kind>.ts); each spreads the shared PreviewLifetimeField (expires_in_seconds). */
  body: z.ZodObject;
  /** Path under the agent API prefix. */
  path: string;
  summary: string;
  description: string;
  family: Family;
  scope: string;
  destructive?: boolean;
  openWorld?: boolean;
  errors: readonly ErrorCode[];
  /** The MCP tool's title and description; its name, like the operationId and CLI command, is `preview_<intent>`. */
  mcp: { title: string; description: string };
}

const TARGET_PARAMS = {
  event_id: EventIdParams,
  endpoint_id: EndpointIdParams,
  subscription_id: SubscriptionIdParams,
} as const;

/** One row per preview, in registry order. */
const PREVIEWS = [
  {
    intent: 'replay',
    target: 'event_id',
    body: ReplayIntentBody,
    path: '/events/{event_id}/replay-intents',
    summary: 'Preview a replay of one event',
    description: `Shows the original event, its endpoint's current config against the version it was first processed with, Flow readiness, retention, possible duplicate side effects in Flow and the meter cost. ${PREVIEW_NOTE}`,
    family: 'recovery',
    scope: 'replay:preview',
    openWorld: true,
    errors: [
      ...PREVIEW_ERRORS,
      ...EVENT_REPLAY_REFUSALS,
      'replay_in_flight',
      'replay_limit_reached',
      'replay_recent_delivery',
      'event_already_recovered',
      'outside_product_boundary',
    ],
    mcp: {
      title: 'Preview replaying an event',
      description:
        'Prepare to hand one event to Shopify Flow again. Returns a preview (what will run, warnings about repeating Flow side effects, cost) and an intent id; nothing runs until the intent is confirmed with confirm_action_intent.',
    },
  },
  {
    intent: 'diagnostics_share',
    target: null,
    body: DiagnosticsShareIntentBody,
    path: '/diagnostics/share-intents',
    summary: 'Preview a diagnostics share',
    description: `Lists exactly what the bundle will include and exclude (never payload bodies or secrets), the link lifetime and the cost. Confirmation freezes the bundle behind an unguessable link \`/shared/diagnostics/<token>\` (HTML and JSON, no grant needed) shown once. ${PREVIEW_NOTE}`,
    family: 'recovery',
    scope: 'diagnostics_share:preview',
    errors: [...PREVIEW_ERRORS, 'endpoint_archived', 'diagnostics_share_limit_reached'],
    mcp: {
      title: 'Preview sharing diagnostics with support',
      description:
        'Prepare a redacted diagnostics bundle (endpoint config without secrets, recent receipt facts, support codes, readiness checks) to share with a support team through an expiring link. Shows what is included and excluded; nothing is shared until confirmed.',
    },
  },
  {
    intent: 'endpoint_create',
    target: null,
    body: EndpointCreateIntentBody,
    path: '/endpoints/intents',
    summary: 'Preview creating an endpoint',
    description: `Validates and normalises the configuration and shows it as a diff from nothing. Confirmation creates the endpoint and returns its ingest URL and (generated) secret once. ${PREVIEW_NOTE}`,
    family: 'setup',
    scope: 'endpoint_create:preview',
    errors: [],
    mcp: {
      title: 'Preview creating an endpoint',
      description:
        'Prepare a new sender lane (endpoint): name, sender auth mode, Flow trigger variant and field mapping. Shows the exact configuration that will be stored; nothing is created until confirmed.',
    },
  },
  {
    intent: 'endpoint_edit',
    target: 'endpoint_id',
    body: EndpointEditIntentBody,
    path: '/endpoints/{endpoint_id}/edit-intents',
    summary: 'Preview editing an endpoint',
    description: `Shows a field-by-field diff of the configuration and its effect on queued events. Confirmation writes a new configuration version. ${PREVIEW_NOTE}`,
    family: 'setup',
    scope: 'endpoint_edit:preview',
    errors: [...PREVIEW_ERRORS, 'endpoint_archived'],
    mcp: {
      title: 'Preview editing an endpoint',
      description:
        'Prepare a change to an endpoint (name, trigger variant, mapping, verification settings, pause/resume). Shows the diff and what happens to queued events; nothing changes until confirmed.',
    },
  },
  {
    intent: 'secret_rotate',
    target: 'endpoint_id',
    body: SecretRotationIntentBody,
    path: '/endpoints/{endpoint_id}/rotate-secret-intents',
    summary: "Preview rotating an endpoint's signing secret",
    description: `Shows the overlap window during which the current secret keeps verifying. Confirmation generates the new secret and returns it once. ${PREVIEW_NOTE}`,
    family: 'setup',
    scope: 'secret_rotate:preview',
    errors: [...PREVIEW_ERRORS, 'endpoint_archived'],
    mcp: {
      title: "Preview rotating an endpoint's secret",
      description:
        "Prepare replacing an endpoint's signing secret, with an overlap window so the sender can switch without dropping events. The new secret is shown once, on confirmation.",
    },
  },
  {
    intent: 'endpoint_delete',
    target: 'endpoint_id',
    body: EndpointDeleteIntentBody,
    path: '/endpoints/{endpoint_id}/delete-intents',
    summary: 'Preview archiving or deleting an endpoint',
    description: `Counts what will be lost (retained payload bodies, secrets, configuration) and what stays (tombstone, event and receipt metadata). ${PREVIEW_NOTE}`,
    family: 'setup',
    scope: 'endpoint_delete:preview',
    destructive: true,
    errors: [...PREVIEW_ERRORS, 'endpoint_archived', 'endpoint_not_archived', 'event_in_flight'],
    mcp: {
      title: 'Preview archiving or deleting an endpoint',
      description:
        'Prepare to archive an endpoint (stops intake, keeps everything) or, once archived, delete it permanently (secrets and payload bodies destroyed, tombstone kept). Shows counts of what will be lost; nothing changes until confirmed.',
    },
  },
  {
    intent: 'test_event',
    target: 'endpoint_id',
    body: TestEventIntentBody,
    path: '/endpoints/{endpoint_id}/test-event-intents',
    summary: 'Preview sending a test event',
    description: `Shows the exact Flow payload a synthetic test event will carry. Confirmation queues it (marked \`is_test\`) and the worker hands it to Flow like any event. ${PREVIEW_NOTE}`,
    family: 'recovery',
    scope: 'test_event:preview',
    openWorld: true,
    errors: [...PREVIEW_ERRORS, 'endpoint_archived'],
    mcp: {
      title: 'Preview sending a test event to Flow',
      description:
        'Prepare a synthetic, clearly marked test event for an endpoint to check the path to Shopify Flow end to end. Shows the exact payload Flow will receive; nothing is sent until confirmed.',
    },
  },
  {
    intent: 'bulk_replay',
    target: null,
    body: BulkReplayIntentBody,
    path: '/bulk-replay-intents',
    summary: 'Preview a bulk replay',
    description: `Finds every event matching the filter (at most ${BULK_REPLAY_MAX_EVENTS}) and previews replaying them: the count, the meter cost against the plan, a sample of event ids, the events that would be refused by reason (retention expired, recent delivery, endpoint deleted or archived, already replayed), and the estimated duration under Shopify's rate limit. Confirmation runs the replays in the background at a bounded rate; read the intent for progress, cancel it to stop. ${PREVIEW_NOTE}`,
    family: 'recovery',
    scope: 'bulk_replay:preview',
    openWorld: true,
    errors: [...PREVIEW_ERRORS, 'bulk_replay_no_events', 'bulk_replay_too_large', 'replay_limit_reached'],
    mcp: {
      title: 'Preview replaying many events at once',
      description:
        'Prepare to replay every event matching a filter (state, endpoint, time window, error code, no_workflow since a moment), for example after an outage. Shows how many, the plan cost, a sample, what would be refused and why, and how long it takes; nothing is replayed until confirmed.',
    },
  },
  {
    intent: 'alert_subscribe',
    target: null,
    body: AlertSubscriptionIntentBody,
    path: '/alert-subscription-intents',
    summary: 'Preview an alert subscription',
    description: `Previews sending this shop's operational alerts (an endpoint failing, the shop held, no enabled workflow, bodies about to expire unreplayed, a secret overlap ending) to a webhook or a Slack-compatible incoming webhook. Each incident is sent once when it opens and once when it clears. Confirmation shows a webhook's signing secret once. ${PREVIEW_NOTE}`,
    family: 'account',
    scope: 'alert_subscribe:preview',
    openWorld: true,
    errors: ['alert_target_private'],
    mcp: {
      title: 'Preview subscribing to operational alerts',
      description:
        "Prepare sending this shop's operational alerts (failing endpoint, held shop, no enabled workflow, expiring bodies, ending secret overlap) to a signed webhook or a Slack incoming webhook. Nothing is subscribed until confirmed.",
    },
  },
  {
    intent: 'alert_unsubscribe',
    target: 'subscription_id',
    body: AlertUnsubscribeIntentBody,
    path: '/alert-subscriptions/{subscription_id}/unsubscribe-intents',
    summary: 'Preview removing an alert subscription',
    description: `Previews removing one of this shop's alert subscriptions (listed by \`listAlertSubscriptions\`): how many of its messages are still pending, and whether any other channel stays subscribed. Confirmation stops every further message to it, cancels the pending ones and destroys its URL and signing secret; it stays listed with status \`removed\`. ${PREVIEW_NOTE}`,
    family: 'account',
    scope: 'alert_unsubscribe:preview',
    destructive: true,
    errors: [...PREVIEW_ERRORS],
    mcp: {
      title: 'Preview removing an alert subscription',
      description:
        "Prepare to stop sending this shop's operational alerts to one subscribed webhook or Slack channel (see list_alert_subscriptions). Shows its pending messages and whether another channel stays subscribed; nothing changes until confirmed.",
    },
  },
] as const satisfies readonly PreviewRow[];

function previewOperation(row: PreviewRow) {
  const { intent, target, body, path, mcp, ...contract } = row;
  const name = `preview_${intent}`;
  const request: OperationRequest = target ? { params: TARGET_PARAMS[target], body } : { body };
  return defineOperation({
    operationId: operationIdFor(name),
    method: 'post',
    path: `${AGENT_API_PREFIX}${path}`,
    ...contract,
    errors: [...contract.errors, 'preview_lifetime_out_of_range'],
    mcp: { name, ...mcp },
    cli: cliWordsFor(name),
    kind: 'preview',
    meter: 'preview',
    request,
    response: ActionIntentSchema,
    successStatus: 201,
    run: async ({ ctx, input }) => previewAction({ ctx, kind: intent, target, input }),
  });
}

/** The preview operations, in the table's order (the registry lists them there). */
export const PREVIEW_OPERATIONS: readonly AnyOperation[] = (PREVIEWS as readonly PreviewRow[]).map(previewOperation);
