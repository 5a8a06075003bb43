import type { ErrorDef } from '../catalog.ts';

// Action intent errors: previews, confirmation, idempotency, and the refusals
// every governed side effect can meet (target state, usage caps, safety, product boundary).
export const INTENT_ERRORS = {
  // ---- confirmation and idempotency ----
  idempotency_key_missing: {
    status: 400,
    title: 'Idempotency-Key header required',
    retry: 'no',
    area: 'intent',
    description:
      'Confirming an action intent performs a side effect, so the request must carry an `Idempotency-Key` header (MCP: the `idempotency_key` tool input). The key lets you retry safely: the same key and request return the stored response instead of running the action twice.',
    fix: 'Generate a random key (a UUID v4 is ideal, 1–255 printable characters) once per confirmation, send it as `Idempotency-Key: <key>`, and reuse the same key when you retry that confirmation.',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency-Key already used for a different request',
    retry: 'no',
    area: 'intent',
    description:
      'This key was already used within the last 24 hours for a different request (for example, to confirm another intent). A key identifies one request; Flowport will not apply it to another.',
    fix: 'Use a fresh key for each distinct confirmation. Reuse a key only to retry the exact same request.',
  },
  idempotency_key_in_use: {
    status: 409,
    title: 'A request with this Idempotency-Key is still running',
    retry: 'client',
    area: 'intent',
    description:
      'Another request with the same `Idempotency-Key` is being processed right now. Flowport runs the action once; the concurrent request is not executed.',
    fix: 'Wait a moment and retry with the same key: once the first request finishes you receive its stored response.',
  },
  // ---- intent lifecycle (target_state) ----
  preview_lifetime_out_of_range: {
    status: 400,
    title: 'Preview lifetime out of range',
    retry: 'no',
    area: 'intent',
    description:
      'A preview asked for a lifetime (`expires_in_seconds`) that is not a whole number of seconds from 60 to 86400 (24 hours). Nothing was recorded.',
    fix: 'Send `expires_in_seconds` between 60 and 86400, or leave it out for the default (15 minutes unless the operator changed it; the manifest states it as `action_intents.preview_lifetime_seconds`).',
  },
  intent_expired: {
    steps: [
      {
        kind: 'call',
        operation: 'listActionIntents',
        description: 'Find the expired intent and its parameters, then preview the same action again.',
      },
    ],
    status: 410,
    title: 'Action intent expired',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      'Previews are valid for a limited time (15 minutes by default) because the facts they show can go stale. This intent passed its `expires_at` without being confirmed, so it can no longer run.',
    fix: 'Create a fresh preview with the same preview operation, review it, then confirm the new intent id.',
  },
  intent_not_confirmable: {
    steps: [
      {
        kind: 'call',
        operation: 'getActionIntent',
        description: 'Read the intent: its state and result say what happened.',
      },
    ],
    status: 409,
    title: 'Action intent is not awaiting confirmation',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      'Only an intent in state `previewed` can be confirmed or cancelled. This one was already confirmed, executed, failed, refused, cancelled or expired. An intent runs at most once.',
    fix: 'Read the intent (`GET /agent/v1/action-intents/{intent_id}`) to see its state and result. To run the action again, create a new preview.',
  },
  intent_stale: {
    steps: [
      {
        kind: 'call',
        operation: 'getActionIntent',
        description: 'Read the intent (state refused) and preview the same action again to see what changed.',
      },
    ],
    status: 409,
    title: 'Target changed since the preview',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      'Something the preview showed changed before confirmation: the endpoint configuration version, the event state, the endpoint status, or another action ran on the same target. Confirming would run an action different from the one reviewed, so Flowport refuses it and marks the intent `refused`.',
    fix: 'Create a fresh preview, review what changed, and confirm the new intent.',
  },
  // ---- targets (target_state) ----
  retention_expired: {
    status: 410,
    title: 'Event body no longer retained',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      "The event's payload body was purged when the plan's retention period ended (metadata and receipts remain). Without the body Flowport cannot hand the event to Flow again.",
    fix: 'Ask the sender to resend the event (most senders offer a redeliver button), or move to a plan with longer retention for future events.',
  },
  endpoint_archived: {
    status: 409,
    title: 'Endpoint is archived',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      'The endpoint this action targets is archived (or permanently deleted). Archived endpoints accept no events and no replays, test events, edits or rotations.',
    fix: 'Use an active endpoint. An archived endpoint can only be permanently deleted (endpoint delete intent with `mode: "permanent"`).',
  },
  endpoint_not_archived: {
    status: 409,
    title: 'Permanent delete needs an archived endpoint',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      'Endpoints are deleted in two steps so nothing is lost by accident: first archive (stops intake, keeps everything), then permanently delete (clears secrets and payload bodies; a tombstone remains).',
    fix: 'Preview and confirm an endpoint delete intent with `mode: "archive"` first, then a second one with `mode: "permanent"`.',
  },
  event_rejected: {
    steps: [
      {
        kind: 'call',
        operation: 'getEventReceipt',
        description: "Read the event's receipt: why intake rejected it, and what the sender must change.",
      },
    ],
    status: 409,
    title: 'Rejected events cannot be replayed',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      'The event failed authentication or validation at intake, so Flowport never accepted it and kept no body. Replaying it would hand Flow data nobody proved authentic.',
    fix: 'Read the receipt to see why it was rejected, fix the sender (signature, secret, required fields) and have it send the event again.',
  },
  event_in_flight: {
    steps: [
      {
        kind: 'call',
        operation: 'getEvent',
        description:
          'Follow the event until it is delivered, no_workflow or failed, then preview again if still needed.',
      },
    ],
    status: 409,
    title: 'Event is still being delivered',
    layer: 'target_state',
    retry: 'client',
    area: 'intent',
    description:
      'The event is `accepted`, `queued` or `delivering`: the worker will still hand it to Flow (with automatic retries). A replay now would very likely start a second workflow run.',
    fix: 'Wait for the event to reach `delivered`, `no_workflow` or `failed` (watch `GET /agent/v1/events/{event_id}`), then preview the replay again if it is still needed.',
  },
  event_held: {
    steps: [
      {
        kind: 'call',
        operation: 'getEvent',
        description: "Read the event's handoff.hold: what holds the shop and how it is released.",
      },
    ],
    status: 409,
    title: 'Event is held until the shop can take deliveries',
    layer: 'target_state',
    retry: 'client',
    area: 'intent',
    description:
      "The event is `held`: the shop cannot take deliveries now (the app was disconnected or uninstalled, or Shopify refuses the store: frozen, locked, access denied, not found). Flowport delivers every held event by itself, once, when the hold ends; a replay now would only be held too, and would run the workflow twice afterwards. A held event that is not released before its body expires (the event read's `handoff.hold.release_by`) ends `failed` with support code `FP-H-HEXP` and stays listed as a record.",
    fix: "Fix what holds the shop (the event read's `handoff.hold` and its recovery option say what: pay the Shopify bill, reconnect or reinstall the app…). The events are then released and delivered without a replay.",
  },
  event_not_replayable: {
    status: 409,
    title: 'Event cannot be replayed',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      "The event exists but its state rules out a replay: it was suppressed as a duplicate (replay the first event it links to), or the shop is disconnected from Shopify so nothing can reach Flow. The refusal's `reason` says which.",
    fix: 'Follow the reason: replay the event named in `duplicate_of`, or have the merchant reconnect the Shopify app (held events are released then) and preview again.',
  },
  replay_in_flight: {
    steps: [
      { kind: 'call', operation: 'getEvent', description: 'Read the event: the replay in flight and when it ends.' },
    ],
    status: 409,
    title: 'The event already has a replay in flight',
    layer: 'target_state',
    retry: 'client',
    area: 'intent',
    description:
      'An event has at most one replay in flight, whoever asks: another replay of this event is queued or being delivered, or a confirmed bulk replay still has the event pending. Flow has no idempotency, so a second replay now would start a second workflow run (a second email, a second tag). The store decides, so two confirmations at the same moment cannot both win. The refusal names what holds the event: `held_by_intent_id` and `replay_event_id` (null while a bulk replay has not reached the event yet). In a bulk replay, an event some other replay holds is not replayed: its item is refused with this code and counted in `refused_by_reason`.',
    fix: 'Wait until the replay in flight is `delivered`, `no_workflow` or `failed` (`GET /agent/v1/events/{replay_event_id}`), or until the bulk replay holding the event finishes (or cancel it), then preview again if another run is really intended.',
  },
  // ---- usage caps ----
  replay_limit_reached: {
    steps: [{ kind: 'call', operation: 'getPlanUsage', description: "Check the plan's meters and when they reset." }],
    status: 402,
    title: 'Monthly replay cap reached',
    layer: 'usage',
    retry: 'no',
    area: 'intent',
    description:
      "The shop's plan allows a fixed number of replays per calendar month (UTC) and they are used up. Nothing is charged silently and no replay was queued.",
    fix: 'Check `GET /agent/v1/plan-usage`. Wait for the next month, or ask the merchant to upgrade the plan.',
  },
  diagnostics_share_gone: {
    status: 410,
    title: 'Diagnostics link expired or revoked',
    retry: 'no',
    area: 'intent',
    description:
      'This shared diagnostics link existed but has expired or was revoked; the frozen bundle behind it is no longer served.',
    fix: 'Ask the merchant (or an agent with the diagnostics share scope) to share a fresh link with `previewDiagnosticsShare`.',
  },
  diagnostics_share_limit_reached: {
    steps: [{ kind: 'call', operation: 'getPlanUsage', description: "Check the plan's meters and when they reset." }],
    status: 402,
    title: 'Monthly diagnostics share cap reached',
    layer: 'usage',
    retry: 'no',
    area: 'intent',
    description:
      "The shop's plan allows a fixed number of diagnostics shares per calendar month (UTC) and they are used up. No link was created.",
    fix: 'Reuse a link you already shared if it has not expired, wait for the next month, or ask the merchant to upgrade the plan.',
  },
  // ---- safety ----
  replay_recent_delivery: {
    steps: [
      {
        kind: 'retry_with',
        field: 'acknowledge_recent_delivery',
        value: true,
        description:
          'If a second workflow run is really intended, preview again with acknowledge_recent_delivery: true.',
      },
      {
        kind: 'call',
        operation: 'getEvent',
        description: 'Read the event: its attempts say when Flow took it; check that run in Shopify Flow first.',
      },
    ],
    status: 409,
    title: 'Replay would repeat Flow side effects within minutes',
    layer: 'safety',
    retry: 'no',
    area: 'intent',
    description:
      'This event (or a replay of it) was delivered to Shopify Flow only minutes ago. Flow has no idempotency: a replay starts another workflow run, which can send a second email, tag twice or create a duplicate record.',
    fix: 'Check in Shopify Flow whether the first run did what was needed. If a second run is really intended, preview again with `acknowledge_recent_delivery: true`.',
  },
  event_already_recovered: {
    steps: [
      {
        kind: 'call',
        operation: 'getEvent',
        description: 'Read the event: recovered_by names the replay that reached Flow; check its run in Shopify Flow.',
      },
      {
        kind: 'retry_with',
        field: 'acknowledge_recovered',
        value: true,
        description: 'If another workflow run is really intended, preview again with acknowledge_recovered: true.',
      },
    ],
    status: 409,
    title: 'The event is already recovered: a replay of it reached Flow',
    layer: 'safety',
    retry: 'no',
    area: 'intent',
    description:
      "A replay of this sender event (of the event itself, or of a replay of it, at any depth) was delivered to Shopify Flow: the event's `recovered_by` names that replay. Flow has no idempotency, so replaying it again starts another workflow run, which can repeat what the first one did (an email, a tag, a record). A bulk replay leaves recovered events out for the same reason (`details.excluded.recovered`).",
    fix: 'Read the replay in `recovered_by` (`GET /agent/v1/events/{event_id}`) and check in Shopify Flow what its run did. If another run is really intended, preview again with `acknowledge_recovered: true` (a bulk replay: the same field includes the recovered events).',
  },
  bulk_replay_no_events: {
    steps: [
      {
        kind: 'call',
        operation: 'listEvents',
        description: 'List the events with the same state and window to check the filter.',
      },
      {
        kind: 'retry_with',
        field: 'acknowledge_recent_delivery',
        value: true,
        description:
          'Only when `refused.recent_delivery` counts them (delivered minutes ago) and a second workflow run is intended: preview again with acknowledge_recent_delivery: true.',
      },
      {
        kind: 'retry_with',
        field: 'acknowledge_recovered',
        value: true,
        description:
          'Only when `excluded.recovered` counts them (a replay of each already reached Flow: nothing is missing) and a further workflow run is intended: preview again with acknowledge_recovered: true.',
      },
    ],
    status: 409,
    title: 'No event matching the filter can be replayed',
    layer: 'target_state',
    retry: 'no',
    area: 'intent',
    description:
      'A bulk replay preview found no event it could replay: none matched the filter (state, endpoint, time window, error code, `no_workflow_since`), or every one that matched would be refused. `refused` counts them by reason (retention expired, recent delivery, endpoint deleted or archived, already replayed …) and `refused_sample` names a few.',
    fix: 'Check the filter against `GET /agent/v1/events` with the same state and window. Events whose body expired cannot be replayed: have the sender send them again. For events delivered minutes ago, preview again with `acknowledge_recent_delivery: true` if a second workflow run is intended. Events left out as already recovered (`excluded.recovered`) need nothing: a replay of each reached Flow; `acknowledge_recovered: true` only if a further run is intended.',
  },
  bulk_replay_too_large: {
    status: 409,
    title: 'The bulk replay filter matches too many events',
    layer: 'safety',
    retry: 'no',
    area: 'intent',
    description:
      'One bulk replay covers at most `max_events` events, so its preview can be reviewed and its run stays bounded. The filter matched more.',
    fix: 'Narrow the filter (an endpoint, a shorter `received_after`/`received_before` window, an error code) and run several bulk replays, one after another.',
  },
  alert_target_private: {
    status: 422,
    title: 'The alert URL points inside a private network',
    layer: 'safety',
    retry: 'no',
    area: 'intent',
    description:
      'Flowport sends alerts only to the public internet: an alert URL whose host is, or resolves to, a loopback, private, link-local or reserved address is refused when the subscription is previewed or confirmed, and a message is not sent if the name has been re-pointed there since. This keeps a grant from using Flowport to reach services inside the network it runs in.',
    fix: 'Use a public https URL for the receiver (a relay on the public internet if it lives inside your network). An operator who runs Flowport next to its receivers can set `FLOWPORT_ALERT_PRIVATE_TARGETS=on`.',
  },
  // ---- product boundary ----
  outside_product_boundary: {
    status: 422,
    title: 'Outside what Flowport governs',
    layer: 'product_boundary',
    retry: 'no',
    area: 'intent',
    description:
      'The request asks Flowport to do something it does not do: for example, to change the payload of a received event before replaying it. Flowport proves, stores and hands over what senders sent; it does not author event data or run Flow workflows.',
    fix: 'To send different data, have the sender send a new event, or use a test event intent (clearly marked as a test). Workflow behaviour is configured in Shopify Flow itself.',
  },
} as const satisfies Record<string, ErrorDef>;
