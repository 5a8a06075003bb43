import type { ErrorCode, ErrorDef } from '../catalog.ts';

// Sender intake errors: what a sender did wrong and how to fix it. Each page
// generated from here is read by whoever configures the sender, so the fix
// says what to change on the sending side.
export const INTAKE_ERRORS = {
  signature_missing: {
    answers: ['sender'],
    status: 401,
    title: 'Signature header missing',
    retry: 'no',
    area: 'intake',
    description:
      "The request has no signature header for this endpoint's auth mode, so Flowport cannot prove who sent it.",
    fix: "Configure the sender to sign requests with the endpoint's signing secret and send the header its auth mode expects (see the endpoint's auth mode page).",
  },
  signature_malformed: {
    answers: ['sender'],
    status: 401,
    title: 'Signature header malformed',
    retry: 'no',
    area: 'intake',
    description:
      'The signature header is present but not in the format the auth mode expects (for example `t=…,v1=…` for Stripe, `v1,<base64>` for Standard Webhooks, `sha256=<hex>` for GitHub).',
    fix: "Check that the sender uses the preset the endpoint is configured with. Send the header exactly as the sender's library produces it; do not add quotes or re-encode it.",
  },
  signature_mismatch: {
    answers: ['sender'],
    status: 401,
    title: 'Signature does not match',
    retry: 'no',
    area: 'intake',
    description:
      "The signature was computed over different bytes or with a different secret. Flowport verifies the signed content exactly as received: the raw body, or `{timestamp}.{body}` when the endpoint has a timestamp header configured, or the preset's own format (Stripe `{t}.{body}`, Standard Webhooks `{webhook-id}.{webhook-timestamp}.{body}`, Slack `v0:{timestamp}:{body}`). The refusal's detail and its receipt's `failure.detail` say which, for this endpoint; the receipt's `failure.hint` says when the signature matches a well-known alternative (the body without the timestamp, an expired previous secret, a trailing newline …).",
    fix: "Sign the signed content the endpoint expects (the receipt's `failure.detail` names it) over the exact bytes you send (no re-serialisation), with the current signing secret. After a rotation, update the sender before the overlap ends.",
  },
  timestamp_missing: {
    answers: ['sender'],
    status: 401,
    title: 'Signature timestamp missing',
    retry: 'no',
    area: 'intake',
    description:
      "This endpoint's auth mode signs a timestamp (Stripe `t=`, Standard Webhooks `webhook-timestamp`, Slack `X-Slack-Request-Timestamp`, or a configured header) and the request carries none.",
    fix: 'Send the timestamp header the auth mode expects. Real sender libraries add it for you; if you sign by hand, include the current Unix time in seconds.',
  },
  timestamp_invalid: {
    answers: ['sender'],
    status: 401,
    title: 'Signature timestamp invalid',
    retry: 'no',
    area: 'intake',
    description: 'The signature timestamp is not a whole number of seconds since the Unix epoch.',
    fix: 'Send the timestamp as integer Unix seconds (for example `1767225600`), not milliseconds and not an ISO date.',
  },
  timestamp_outside_tolerance: {
    answers: ['sender'],
    status: 401,
    title: 'Signature timestamp outside tolerance',
    retry: 'no',
    area: 'intake',
    description:
      "The signed timestamp is further from Flowport's clock than the endpoint's tolerance (300 seconds by default). Old timestamps are refused so a captured request cannot be replayed later.",
    fix: "Sign each request at send time (do not reuse a signature when retrying) and keep the sender's clock in sync with NTP.",
  },
  credentials_missing: {
    answers: ['sender'],
    status: 401,
    title: 'Credentials missing',
    retry: 'no',
    area: 'intake',
    description:
      'The endpoint uses a static header or HTTP Basic auth, and the request carries neither the header nor an `Authorization: Basic` value.',
    fix: 'Add the header name and value (static header) or the user and password (basic) that were shown when the endpoint was created or its secret rotated.',
  },
  credentials_invalid: {
    answers: ['sender'],
    status: 401,
    title: 'Credentials do not match',
    retry: 'no',
    area: 'intake',
    description:
      "The static header value or the Basic user/password does not match the endpoint's current (or, during a rotation overlap, previous) credentials.",
    fix: 'Copy the credentials again from the endpoint create/rotate output into the sender. After a rotation, update the sender before the overlap ends.',
  },
  body_not_object: {
    answers: ['sender'],
    status: 422,
    title: 'Body is not a JSON object',
    retry: 'no',
    area: 'intake',
    description:
      'The body is valid JSON but not an object (for example an array, a string or `null`). Flowport maps fields by path, so the top level must be an object.',
    fix: 'Send the event as a JSON object, e.g. `{"type": "order.paid", "id": "…"}`.',
  },
  required_path_missing: {
    answers: ['sender'],
    status: 422,
    title: 'Required field missing',
    retry: 'no',
    area: 'intake',
    description:
      "A path listed in the endpoint's required paths (or its resource id path) is absent, `null` or empty in the body. The `errors` array names each missing path.",
    fix: "Include the field in the event, or change the endpoint's mapping if the sender never sends it.",
  },
  invalid_resource_id: {
    answers: ['sender'],
    status: 422,
    title: 'Resource id not valid',
    retry: 'no',
    area: 'intake',
    description:
      'The value at the resource id path is not a Shopify resource id: a positive integer, a string of digits, or a GID like `gid://shopify/Order/1234567890` whose type matches the trigger variant.',
    fix: "Send the Shopify numeric id or GID of the order, customer or product the trigger is about, or point the endpoint's resource id path at the field that holds it.",
  },
  flow_payload_too_large: {
    answers: ['sender', 'event'],
    status: 413,
    title: 'Event too large for Shopify Flow',
    retry: 'no',
    area: 'intake',
    description:
      'The Flow trigger payload built from this event would exceed the 50,000-byte limit Shopify Flow enforces, so it could never be delivered. It was refused at intake instead of failing later.',
    fix: 'Send a smaller event: only the fields your Flow workflow needs. The raw body is passed to Flow, so its size counts almost byte for byte.',
  },
  endpoint_paused: {
    answers: ['sender'],
    status: 423,
    title: 'Endpoint paused',
    layer: 'target_state',
    retry: 'sender',
    area: 'intake',
    description:
      'The endpoint is paused by the merchant, so it accepts nothing for now. Flowport answers 423 (a non-2xx status) so senders keep the event and retry on their own schedule; nothing is stored.',
    fix: 'Keep retrying (senders like Stripe, Shopify and Svix do automatically). Ask the merchant to resume the endpoint.',
  },
  endpoint_gone: {
    answers: ['sender'],
    status: 410,
    title: 'Endpoint archived',
    layer: 'target_state',
    retry: 'no',
    area: 'intake',
    description:
      'The endpoint was archived and will never accept events again. 410 tells well-behaved senders to stop sending.',
    fix: 'Point the sender at an active endpoint, or remove the webhook subscription on the sender side.',
  },
  intake_event_cap_reached: {
    answers: ['sender'],
    status: 429,
    title: 'Monthly event cap reached',
    layer: 'usage',
    retry: 'sender',
    area: 'intake',
    description:
      "The shop has used its plan's accepted events for this month (including any grace). The event was not stored; the 429 and `Retry-After` make senders keep it and retry, so nothing is lost and nothing is charged silently.",
    fix: 'Senders retry automatically. Ask the merchant to upgrade the plan; events flow again at once, or at the start of the next month.',
  },
  shopify_webhook_unverified: {
    status: 401,
    title: 'Shopify webhook not verified',
    retry: 'no',
    area: 'intake',
    description:
      "A request to one of Shopify's URLs (the privacy webhooks, `app/uninstalled`, or Flow's trigger lifecycle callback) had no `X-Shopify-Hmac-Sha256` header, a value that does not match the base64 HMAC-SHA256 of the raw body keyed with the app's client secret, or arrived while no client secret is configured. Nothing was changed.",
    fix: "Set `FLOWPORT_SHOPIFY_CLIENT_SECRET` to the app's client secret (API secret key) from the Partner Dashboard or Dev Dashboard and restart. In sandbox mode `app/uninstalled` and the lifecycle callback are verified with the sandbox app's own secret; the privacy webhooks still need the variable. Shopify signs these requests itself; a request that is not from Shopify is refused on purpose.",
  },

  shopify_webhook_topic_unknown: {
    status: 400,
    title: 'Unknown Shopify webhook topic',
    retry: 'no',
    area: 'intake',
    description:
      'The `X-Shopify-Topic` header of a verified request to the privacy webhook URL is missing or is not one of `customers/data_request`, `customers/redact`, `shop/redact`. Nothing was changed.',
    fix: 'Subscribe only the three privacy topics to this URL in the app configuration (`compliance_topics`); send other topics to their own handler.',
  },
} as const satisfies Record<string, ErrorDef>;

/**
 * The refusals failBodyRead hands to an intake request (api/src/http/client-error.ts makes them; api/src/http/body-reads.ts): its body
 * never arrived whole, so it was not checked, and the connection closes.
 */
export const BODY_NEVER_WHOLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['request_timeout', 'malformed_http']);

/** The HTTP status intake answers for each acknowledgement (`IntakeAck.status`); derived receipts show it too. */
export const ACK_HTTP_STATUS = { queued: 202, duplicate_suppressed: 200, handshake: 200 } as const;

/**
 * Short, stable codes a merchant can read out to support ("FP-I-SIG"); recorded on
 * every receipt. One per outcome family, so support can tell at a glance where
 * a request stopped without seeing its body. Accepted requests carry `FP-I-OK`.
 */
export const INTAKE_SUPPORT_CODES = {
  accepted: { code: 'FP-I-OK', meaning: 'Accepted and queued for handoff.' },
  duplicate: {
    code: 'FP-I-DUP',
    meaning: 'Duplicate external event id inside the dedupe window; recorded, not handed off.',
  },
  signature: { code: 'FP-I-SIG', meaning: 'Signature missing, malformed or not matching.' },
  timestamp: { code: 'FP-I-TS', meaning: 'Signature timestamp missing, invalid or outside tolerance.' },
  credentials: { code: 'FP-I-CRED', meaning: 'Static header or Basic credentials missing or wrong.' },
  media: {
    code: 'FP-I-MEDIA',
    meaning: 'Not JSON: wrong content type, bad encoding, broken HTTP framing or unparsable body.',
  },
  size: { code: 'FP-I-SIZE', meaning: 'Body over the intake limit or the Flow payload limit.' },
  timeout: {
    code: 'FP-I-TIME',
    meaning: 'The body did not arrive within the request timeout; nothing was stored; sender should retry.',
  },
  mapping: { code: 'FP-I-MAP', meaning: 'Required path missing, body not an object, or resource id not valid.' },
  state: { code: 'FP-I-STATE', meaning: 'Endpoint paused or archived.' },
  cap: { code: 'FP-I-CAP', meaning: "Shop's monthly accepted-events cap reached; sender should retry." },
  internal: { code: 'FP-I-INT', meaning: 'Flowport failed internally; nothing was stored; sender should retry.' },
  handshake: {
    code: 'FP-I-HS',
    meaning: "A sender's check of the endpoint (Slack `url_verification`, GitHub `ping`), answered; no event stored.",
  },
} as const;

export type IntakeSupportKey = keyof typeof INTAKE_SUPPORT_CODES;

/** The support code family of each intake rejection; any other error code is `internal`. */
const SUPPORT_KEY_OF: Readonly<Partial<Record<ErrorCode, IntakeSupportKey>>> = {
  signature_missing: 'signature',
  signature_malformed: 'signature',
  signature_mismatch: 'signature',
  timestamp_missing: 'timestamp',
  timestamp_invalid: 'timestamp',
  timestamp_outside_tolerance: 'timestamp',
  credentials_missing: 'credentials',
  credentials_invalid: 'credentials',
  invalid_json: 'media',
  unsupported_media_type: 'media',
  malformed_http: 'media',
  payload_too_large: 'size',
  flow_payload_too_large: 'size',
  request_timeout: 'timeout',
  body_not_object: 'mapping',
  required_path_missing: 'mapping',
  invalid_resource_id: 'mapping',
  invalid_characters: 'mapping',
  endpoint_paused: 'state',
  endpoint_gone: 'state',
  intake_event_cap_reached: 'cap',
};

/** Which support code a rejection with this error code carries. */
export function intakeSupportCode(errorCode: string): string {
  const key = (SUPPORT_KEY_OF as Record<string, IntakeSupportKey | undefined>)[errorCode] ?? 'internal';
  return INTAKE_SUPPORT_CODES[key].code;
}
