import { DEFAULTS, ENV } from '../../config.ts';
import type { ErrorDef } from '../catalog.ts';

/** How often a shop whose store Shopify refuses (frozen, locked, access denied, not found) is probed, as the docs say it. */
const PROBE_EVERY = `Every ${DEFAULTS.shopProbeIntervalMs / 60_000} minutes (\`${ENV.shopProbeIntervalMs}\`)`;

/** What a hold keeps and for how long (ADR 0210): the same words on every held code's page. */
const HELD_UNTIL =
  "A held event keeps its body until the plan's retention ends: each held event's read says by when the hold must end (`handoff.hold.release_by`), and an incident (`retention_expiring`) warns a day before; an event still held then ends `failed` with `FP-H-HEXP` (`event_expired_while_held`), kept as a record, never silently dropped.";

// Handoff errors: why a delivery to Shopify Flow stopped or is being retried.
// The worker stores these on events and attempts (error_code); reads and the
// docs show them. Status is what an API read/action reports for the condition.
export const HANDOFF_ERRORS = {
  flow_trigger_not_found: {
    answers: ['event'],
    status: 409,
    title: 'No Flow workflow uses this trigger',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description:
      "Shopify Flow answered that the trigger handle is invalid: the Flowport app's trigger extension is not deployed on this store, or no workflow has been built with it. The event ends as `no_workflow`; nothing ran in Flow.",
    fix: 'In Shopify admin, open Flow, create and turn on a workflow that starts with the Flowport trigger for this endpoint (its variant is on the endpoint page). Then replay the event.',
  },
  flow_payload_rejected: {
    answers: ['event'],
    status: 422,
    title: 'Flow rejected the payload',
    retry: 'no',
    area: 'handoff',
    description:
      "Shopify Flow answered with a validation error other than an unknown handle or the size limit, usually because the payload does not match the trigger's fields (for example a missing resource id for an order, customer or product trigger). The event ends as `failed`.",
    fix: "Check the endpoint's resource id mapping and trigger variant; the attempt's Flow response summary says which field Flow refused. Fix the mapping, then replay.",
  },
  event_erased: {
    answers: ['event', 'call'],
    status: 410,
    title: "Event body erased at Shopify's request",
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description:
      "Shopify asked Flowport to erase this data (a `customers/redact` or `shop/redact` privacy webhook). The body is gone for good, so the event cannot be replayed; one still waiting for delivery was not delivered and ended as `failed` (handing Flow an event without its data would start the merchant's workflows on nothing). Its metadata stays.",
    fix: 'Nothing to fix: the erasure was requested through Shopify. If the sender sends the event again, it is a new event.',
  },
  shopify_token_revoked: {
    answers: ['event'],
    status: 409,
    title: 'Shopify access token revoked',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description:
      "Shopify answered 401: the store's access token is no longer valid (the app was uninstalled or its access revoked), so Flow did not run the trigger. Flowport marked the shop disconnected and holds the event that hit the 401 (it carries this code) together with the shop's other queued events, instead of burning their retries. " +
      HELD_UNTIL,
    fix: 'Reinstall or reauthorize the Flowport app on the store. Reconnecting releases every held event, this one included; no replay is needed.',
  },
  shop_disconnected: {
    answers: ['event'],
    status: 409,
    title: 'Shop disconnected; delivery held',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description:
      'The shop is disconnected from Shopify (its access token was refused), so Flowport holds its events in the `held` state instead of calling Flow. Held events keep their place and are delivered after the shop reconnects. ' +
      HELD_UNTIL,
    fix: 'Reinstall or reauthorize the Flowport app on the store. Held events are released automatically when the shop reconnects.',
  },
  shop_frozen: {
    answers: ['event'],
    status: 409,
    title: 'Store frozen by Shopify; delivery held',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description: `Shopify answered 402 Payment Required: the store is frozen, usually because its Shopify bill is unpaid, and Shopify refuses every API call for it, so Flow did not run the trigger. Flowport marks the shop \`frozen\` and holds its events in the \`held\` state instead of burning their retries. ${PROBE_EVERY} it sends one held event as a probe; the first probe Shopify accepts releases every held event, each delivered once. Attempts answered 402 do not count against the retry schedule. ${HELD_UNTIL}`,
    fix: 'The store owner pays the outstanding balance in the Shopify admin (Settings → Billing). Nothing to do in Flowport: the next probe finds the store available and releases the held events. To release them at once, an operator runs `npx flowport shops reconnect --shop <shop_id>`.',
  },
  shop_locked: {
    answers: ['event'],
    status: 409,
    title: 'Store locked by Shopify; delivery held',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description: `Shopify answered 423 Locked: Shopify has locked the store (for example after repeated abuse of API limits, or an account issue such as suspected fraud) and refuses every API call for it, so Flow did not run the trigger. Flowport marks the shop \`locked\` and holds its events in the \`held\` state instead of burning their retries. ${PROBE_EVERY} it sends one held event as a probe; the first probe Shopify accepts releases every held event, each delivered once. Attempts answered 423 do not count against the retry schedule. ${HELD_UNTIL}`,
    fix: 'The store owner contacts Shopify Support to unlock the store. Nothing to do in Flowport: the next probe finds the store available and releases the held events. To release them at once, an operator runs `npx flowport shops reconnect --shop <shop_id>`.',
  },
  shop_access_denied: {
    answers: ['event'],
    status: 409,
    title: 'App access to the store denied by Shopify; delivery held',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description: `Shopify answered 403 Forbidden for the store, or answered the Flow call with a GraphQL \`ACCESS_DENIED\` error and no data: the Flowport app no longer has the access it needs there. Shopify answers 403 when an app lacks an access scope, which usually means the app's access was revoked or its scopes changed without the merchant approving them again; it can also mean Shopify flagged the store. Every call for the store gets the same answer, and Flow did not run the trigger. Flowport marks the shop \`access_denied\` and holds its events in the \`held\` state instead of burning their retries. ${PROBE_EVERY} it sends one held event as a probe; the first probe Shopify accepts releases every held event, each delivered once. Attempts refused this way do not count against the retry schedule. ${HELD_UNTIL}`,
    fix: 'The store owner opens the Flowport app in the Shopify admin and approves the access it asks for, or reinstalls the app. Nothing else to do in Flowport: the next probe finds access restored and releases the held events. If the reinstall issued a new access token, or to release the events at once, an operator runs `npx flowport shops reconnect --shop <shop_id>` (with `--access-token-env <name>` for the new token). If Shopify flagged the store, the owner contacts Shopify Support.',
  },
  shop_not_found: {
    answers: ['event'],
    status: 409,
    title: 'Store not found by Shopify; delivery held',
    layer: 'target_state',
    retry: 'no',
    area: 'handoff',
    description: `Shopify answered 404 Not Found for the store's Admin API URL: there is no store there. Usually the owner closed or deleted the store, or the shop's domain in Flowport is wrong (every shop getting 404 points at \`${ENV.shopifyAdminBaseUrl}\` instead). Every call for the store gets the same answer, and Flow did not run the trigger. A closed store can be reopened, and Shopify documents a 404 as something that may be available again later, so Flowport does not fail the events: it marks the shop \`not_found\` and holds its events in the \`held\` state instead of burning their retries. ${PROBE_EVERY} it sends one held event as a probe; the first probe Shopify accepts releases every held event, each delivered once. Attempts answered 404 do not count against the retry schedule. ${HELD_UNTIL}`,
    fix: "Check the shop's domain (`npx flowport shops list`) against the store's myshopify.com domain, and whether the store is still open. If the domain is wrong, an operator corrects it and releases the held events in one step: `npx flowport shops reconnect --shop <shop_id> --domain <store>.myshopify.com`. If the store was closed for good, archive its endpoints so senders stop sending; its held events stay readable. If it reopens, the next probe releases the held events. If every shop gets 404, check `FLOWPORT_SHOPIFY_ADMIN_BASE_URL`; once it is fixed, `npx flowport shops reconnect --shop <shop_id>` releases a shop's events at once.",
  },
  flow_throttled: {
    answers: ['event'],
    status: 503,
    title: 'Shopify throttled the call',
    retry: 'worker',
    area: 'handoff',
    description:
      "Shopify's rate limit for the app on this store was exhausted (`THROTTLED`, as HTTP 200 or 429). Flowport waits as long as Shopify's throttle status asks, slows the shop down, and retries on its bounded schedule.",
    fix: 'Nothing to do for a short burst. If it persists, the store has other apps using the same budget, or the sender bursts far above the store limit; spread the sender out.',
  },
  flow_upstream_error: {
    answers: ['event'],
    status: 502,
    title: 'Shopify returned a server error',
    retry: 'worker',
    area: 'handoff',
    description:
      'Shopify answered with a 5xx status, another unexpected status (a redirect is never followed: the access token goes only to the configured Admin API URL) or an unreadable response. Flowport retries on its bounded schedule with exponential backoff and jitter.',
    fix: 'Usually transient; check https://www.shopifystatus.com. If the event ends `failed` after the last retry, replay it once Shopify is healthy.',
  },
  flow_timeout: {
    answers: ['event'],
    status: 504,
    title: 'Shopify did not answer in time',
    retry: 'worker',
    area: 'handoff',
    description:
      'The call to Shopify timed out. Flow may or may not have received the trigger, so a retry can start a second run: Flowport counts this as a possible duplicate and retries on its bounded schedule.',
    fix: 'Usually transient. Workflows that must not run twice should check the "Flowport event id" field (for example with a metafield or tag) before acting.',
  },
  flow_connection_error: {
    answers: ['event'],
    status: 502,
    title: 'Could not reach Shopify',
    retry: 'worker',
    area: 'handoff',
    description:
      'The connection to Shopify failed (refused, reset or DNS). Flowport retries on its bounded schedule with exponential backoff and jitter. A connection that broke after it was open may have delivered the call, so Flowport counts it as a possible duplicate; a refused connection or a failed DNS lookup cannot have.',
    fix: 'Usually transient. If every event of every shop shows this, check the host network and the configured Shopify Admin base URL.',
  },
  flow_retries_exhausted: {
    answers: ['event'],
    status: 502,
    title: 'Delivery failed after the last retry',
    retry: 'no',
    area: 'handoff',
    description:
      "Every attempt on Flowport's retry schedule failed with a retryable problem (throttling, server errors, timeouts or connection errors). The event ends as `failed`; its attempts show each try and its reason.",
    fix: 'Find the cause in the last attempt (throttling, Shopify 5xx, network). Once it is fixed, replay the event; its body is kept for the plan retention period.',
  },
} as const satisfies Record<string, ErrorDef>;
