// Per-auth-mode facts, defined once: intake reads the preset external-id and
// event-type sources from here, the CLI its secret handling, and each mode's docs page
// renders its facts section from it (scripts/docs/lib/auth-mode-pages.ts): header names,
// signed content, encoding, tolerance, dedupe and event-type sources, create command, example.
// Examples use placeholders only (<SIGNING_SECRET>, <INGEST_URL> …).
import type { AuthMode } from '../store/tables/endpoints.ts';
import {
  DEFAULT_HMAC,
  DEFAULT_STATIC_HEADER,
  DEFAULT_TOLERANCE_SEC,
  type EndpointConfig,
  effectiveExternalId,
  PRESET_EXTERNAL_IDS,
  type ValueSource,
} from '../services/endpoints.ts';

export type { ValueSource } from '../services/endpoints.ts';

export type Handshake = (
  | { kind: 'challenge'; typeField: string; type: string; challengeField: string }
  | { kind: 'ping'; header: string; value: string }
) & {
  /** When the sender makes it, for the docs, e.g. "when you set the Request URL". */
  sentWhen: string;
};

export interface AuthModeFacts {
  mode: AuthMode;
  /** Page title, e.g. "Stripe". */
  title: string;
  /** One sentence for the page intro and lists. */
  summary: string;
  /** Products that sign this way. */
  senders: readonly string[];
  /** Request headers the mode reads, as senders spell them. */
  headers: readonly { name: string; description: string }[];
  /** What the HMAC covers ({body} = the raw body bytes), or null for non-HMAC modes. */
  signedContent: string | null;
  /** How the signature or credential is encoded. */
  encoding: string;
  /** What the signing secret looks like and where it comes from. */
  secretFormat: string;
  /** Timestamp tolerance in seconds, or null when the scheme signs no timestamp. */
  toleranceSec: number | null;
  /** Several signatures in one header are accepted (rotation on the sender side). */
  multipleSignatures: boolean;
  /** Default external event id used for dedupe (null: none unless configured). */
  externalId: ValueSource | null;
  /** Default event type (Flow's "Event type" field); falls back to the mapping's eventTypePath. */
  eventType: ValueSource | null;
  /**
   * The environment variable the docs import the secret from, for modes whose secret the
   * sender generates (Stripe, Shopify, Slack): `--secret-env <it>` on create or import-secret.
   * Null: Flowport generates the secret and the sender is given it.
   */
  secretEnv: string | null;
  /** Mode-specific options shown in the create command (placeholders), e.g. ` [--static-header <HEADER>]`. */
  createOptions: string;
  /** A code or curl example that signs like the sender (placeholders). */
  example: { language: 'ts' | 'sh'; code: string };
  notes: readonly string[];
  /**
   * A request the sender makes to check the endpoint rather than to deliver an event; once
   * verified it is answered 200 and stored as no event (a receipt only). `challenge`: Slack's
   * `url_verification`, a body whose `typeField` equals `type`, answered with the value of
   * `challengeField`. `ping`: GitHub's `ping`, a request whose `header` equals `value`.
   * Null: the mode has none.
   */
  handshake: Handshake | null;
}

export const AUTH_MODE_FACTS: Record<AuthMode, AuthModeFacts> = {
  hmac_sha256: {
    mode: 'hmac_sha256',
    title: 'Generic HMAC-SHA256',
    summary:
      'Any sender that signs the raw body with HMAC-SHA256 and a shared secret; header, encoding, prefix and an optional signed timestamp are configurable.',
    senders: [
      'Custom senders',
      'Typeform (header typeform-signature, base64, prefix sha256=)',
      'Most in-house webhooks',
    ],
    headers: [
      {
        name: DEFAULT_HMAC.header,
        description: `The signature (configurable; default \`${DEFAULT_HMAC.prefix}<hex>\`).`,
      },
      {
        name: '<TIMESTAMP_HEADER>',
        description: 'Optional: integer Unix seconds, signed as `{timestamp}.{body}` when configured.',
      },
    ],
    signedContent: '{body}, or {timestamp}.{body} when a timestamp header is configured',
    encoding: 'hex (default) or base64, with an optional prefix (default `sha256=`)',
    secretFormat:
      'Generated `fpsec_…` string, or import your own with --secret-env; used as the HMAC key as UTF-8 text.',
    toleranceSec: DEFAULT_TOLERANCE_SEC,
    multipleSignatures: false,
    externalId: null,
    eventType: null,
    secretEnv: null,
    createOptions:
      ' [--signature-header <HEADER>] [--signature-encoding hex|base64] [--signature-prefix <PREFIX>] [--timestamp-header <HEADER>] [--external-id-header <HEADER> | --external-id-path <PATH>]',
    example: {
      language: 'sh',
      code: [
        `BODY='{"type":"order.paid","id":"evt_123","order_id":1001}'`,
        `SIG=$(printf '%s' "$BODY" | openssl dgst -sha256 -hmac '<SIGNING_SECRET>' -hex | sed 's/^.* //')`,
        `curl -sS -X POST '<INGEST_URL>' -H 'Content-Type: application/json' -H "${DEFAULT_HMAC.header}: ${DEFAULT_HMAC.prefix}$SIG" --data "$BODY"`,
      ].join('\n'),
    },
    notes: [
      'Without a timestamp header the signature does not expire; prefer a timestamp and rely on dedupe for retries.',
    ],
    handshake: null,
  },
  github: {
    mode: 'github',
    title: 'GitHub',
    summary: 'GitHub repository, organization and app webhooks, verified with X-Hub-Signature-256.',
    senders: ['GitHub', 'Gitea and Forgejo (GitHub-compatible header)'],
    headers: [
      { name: 'X-Hub-Signature-256', description: '`sha256=<hex>` HMAC-SHA256 of the raw body.' },
      {
        name: 'X-GitHub-Delivery',
        description: 'Delivery GUID; the external event id (redeliveries reuse it, so they are deduplicated).',
      },
      { name: 'X-GitHub-Event', description: 'Event name, used as the event type.' },
    ],
    signedContent: '{body}',
    encoding: 'hex with prefix `sha256=`',
    secretFormat: 'Any string you choose; Flowport generates an `fpsec_…` secret you paste into GitHub.',
    toleranceSec: null,
    multipleSignatures: false,
    externalId: PRESET_EXTERNAL_IDS.github,
    eventType: { from: 'header', names: ['x-github-event'] },
    secretEnv: null,
    createOptions: '',
    example: {
      language: 'ts',
      code: [
        "import { sign } from '@octokit/webhooks-methods';",
        'const body = JSON.stringify({ action: "opened", number: 1 });',
        "const signature = await sign('<SIGNING_SECRET>', body); // sha256=<hex>",
        "await fetch('<INGEST_URL>', { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature, 'x-github-delivery': crypto.randomUUID(), 'x-github-event': 'issues' } });",
      ].join('\n'),
    },
    notes: [
      'GitHub signs no timestamp, so replay protection comes from dedupe on X-GitHub-Delivery.',
      'The legacy SHA-1 X-Hub-Signature header is ignored.',
    ],
    handshake: { kind: 'ping', header: 'x-github-event', value: 'ping', sentWhen: 'when you create the webhook' },
  },
  shopify: {
    mode: 'shopify',
    title: 'Shopify webhooks',
    summary: "Shopify Admin webhooks, verified with X-Shopify-Hmac-Sha256 and the app's client secret.",
    senders: ['Shopify (Admin API webhook subscriptions)'],
    headers: [
      { name: 'X-Shopify-Hmac-Sha256', description: 'Base64 HMAC-SHA256 of the raw body.' },
      {
        name: 'X-Shopify-Event-Id',
        description: 'Event id; the external event id (falls back to X-Shopify-Webhook-Id).',
      },
      { name: 'X-Shopify-Topic', description: 'Topic such as `orders/paid`, used as the event type.' },
    ],
    signedContent: '{body}',
    encoding: 'base64, no prefix',
    secretFormat:
      "The Shopify app's client secret (import it with --secret-env); webhooks created in the admin use the shown signing key.",
    toleranceSec: null,
    multipleSignatures: false,
    externalId: PRESET_EXTERNAL_IDS.shopify,
    eventType: { from: 'header', names: ['x-shopify-topic'] },
    secretEnv: 'SHOPIFY_CLIENT_SECRET',
    createOptions: '',
    example: {
      language: 'sh',
      code: [
        `BODY='{"id":820982911946154508,"email":"jon@example.com"}'`,
        `SIG=$(printf '%s' "$BODY" | openssl dgst -sha256 -hmac '<SIGNING_SECRET>' -binary | base64)`,
        `curl -sS -X POST '<INGEST_URL>' -H 'Content-Type: application/json' -H "X-Shopify-Hmac-Sha256: $SIG" -H 'X-Shopify-Topic: orders/paid' -H 'X-Shopify-Event-Id: <EVENT_ID>' --data "$BODY"`,
      ].join('\n'),
    },
    notes: ['Shopify signs no timestamp; dedupe on X-Shopify-Event-Id absorbs Shopify retries.'],
    handshake: null,
  },
  stripe: {
    mode: 'stripe',
    title: 'Stripe',
    summary: 'Stripe webhook endpoints, verified with Stripe-Signature (t=…,v1=…) and the endpoint signing secret.',
    senders: ['Stripe'],
    headers: [
      {
        name: 'Stripe-Signature',
        description: '`t=<unix seconds>,v1=<hex>[,v1=<hex>…]`; v0 and other schemes are ignored.',
      },
    ],
    signedContent: '{t}.{body}',
    encoding: 'hex; key = the whole `whsec_…` string as text',
    secretFormat:
      'The endpoint signing secret `whsec_…` from Stripe (import with --secret-env), or a generated one for tests.',
    toleranceSec: DEFAULT_TOLERANCE_SEC,
    multipleSignatures: true,
    externalId: PRESET_EXTERNAL_IDS.stripe,
    eventType: { from: 'json', path: 'type' },
    secretEnv: 'STRIPE_WEBHOOK_SECRET',
    createOptions: '',
    example: {
      language: 'ts',
      code: [
        "import Stripe from 'stripe';",
        "const stripe = new Stripe('<STRIPE_API_KEY>');",
        "const payload = JSON.stringify({ id: 'evt_123', type: 'payment_intent.succeeded', data: { object: {} } });",
        "const header = stripe.webhooks.generateTestHeaderString({ payload, secret: '<SIGNING_SECRET>' });",
        "await fetch('<INGEST_URL>', { method: 'POST', body: payload, headers: { 'content-type': 'application/json', 'stripe-signature': header } });",
      ].join('\n'),
    },
    notes: [
      "Stripe's event `id` (`evt_…`) is the external id, so Stripe retries are deduplicated.",
      'During a Stripe-side secret roll Stripe sends several v1 signatures; any match is accepted.',
    ],
    handshake: null,
  },
  standard_webhooks: {
    mode: 'standard_webhooks',
    title: 'Standard Webhooks (Svix)',
    summary:
      'The Standard Webhooks scheme used by Svix, Resend, Clerk, OpenAI and others; svix-* headers are accepted too.',
    senders: ['Svix', 'Resend', 'Clerk', 'OpenAI', 'Any standardwebhooks library'],
    headers: [
      { name: 'webhook-id', description: 'Message id; signed, and the external event id. (`svix-id` also accepted.)' },
      { name: 'webhook-timestamp', description: 'Integer Unix seconds; signed. (`svix-timestamp`.)' },
      { name: 'webhook-signature', description: 'Space-separated `v1,<base64>` signatures. (`svix-signature`.)' },
    ],
    signedContent: '{webhook-id}.{webhook-timestamp}.{body}',
    encoding: 'base64, `v1,` prefix, several space-separated; key = base64-decoded part after `whsec_`',
    secretFormat: '`whsec_<base64>` (generated here, or imported from the sender with --secret-env).',
    toleranceSec: DEFAULT_TOLERANCE_SEC,
    multipleSignatures: true,
    externalId: PRESET_EXTERNAL_IDS.standard_webhooks,
    eventType: { from: 'json', path: 'type' },
    secretEnv: null,
    createOptions: '',
    example: {
      language: 'ts',
      code: [
        "import { Webhook } from 'standardwebhooks';",
        "const wh = new Webhook('<SIGNING_SECRET>');",
        "const id = 'msg_<ID>'; const now = new Date(); const body = JSON.stringify({ type: 'user.created', data: {} });",
        'const signature = wh.sign(id, now, body);',
        "await fetch('<INGEST_URL>', { method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature } });",
      ].join('\n'),
    },
    notes: [
      'Asymmetric `v1a` signatures are ignored.',
      'Timestamps more than 300 s in the past or future are refused.',
    ],
    handshake: null,
  },
  slack: {
    mode: 'slack',
    title: 'Slack',
    summary: 'Slack Events API requests, verified with X-Slack-Signature and the app signing secret.',
    senders: ['Slack (Events API)'],
    headers: [
      { name: 'X-Slack-Signature', description: '`v0=<hex>` HMAC-SHA256.' },
      { name: 'X-Slack-Request-Timestamp', description: 'Integer Unix seconds; signed.' },
    ],
    signedContent: 'v0:{timestamp}:{body}',
    encoding: 'hex with prefix `v0=`',
    secretFormat: "The Slack app's Signing Secret (Basic Information page), imported with --secret-env.",
    toleranceSec: DEFAULT_TOLERANCE_SEC,
    multipleSignatures: false,
    externalId: PRESET_EXTERNAL_IDS.slack,
    eventType: { from: 'json', path: 'event.type' },
    secretEnv: 'SLACK_SIGNING_SECRET',
    createOptions: '',
    example: {
      language: 'sh',
      code: [
        `BODY='{"type":"event_callback","event_id":"Ev123","event":{"type":"app_mention"}}'`,
        'TS=$(date +%s)',
        `SIG=$(printf 'v0:%s:%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac '<SIGNING_SECRET>' -hex | sed 's/^.* //')`,
        `curl -sS -X POST '<INGEST_URL>' -H 'Content-Type: application/json' -H "X-Slack-Request-Timestamp: $TS" -H "X-Slack-Signature: v0=$SIG" --data "$BODY"`,
      ].join('\n'),
    },
    notes: [],
    handshake: {
      kind: 'challenge',
      typeField: 'type',
      type: 'url_verification',
      challengeField: 'challenge',
      sentWhen: 'when you set the Request URL',
    },
  },
  static_header: {
    mode: 'static_header',
    title: 'Static header token',
    summary:
      'A generated header name and secret value the sender sends unchanged on every request; for senders that cannot sign.',
    senders: ['No-code tools (Zapier, Make, n8n webhooks)', 'Senders that only support custom headers'],
    headers: [
      { name: DEFAULT_STATIC_HEADER, description: 'The secret value (header name configurable with --static-header).' },
    ],
    signedContent: null,
    encoding: 'the value as is, compared in constant time',
    secretFormat: 'Generated `fptok_…` value.',
    toleranceSec: null,
    multipleSignatures: false,
    externalId: null,
    eventType: null,
    secretEnv: null,
    createOptions: ' [--static-header <HEADER>] [--external-id-path <PATH>]',
    example: {
      language: 'sh',
      code: `curl -sS -X POST '<INGEST_URL>' -H 'Content-Type: application/json' -H '${DEFAULT_STATIC_HEADER}: <SECRET_VALUE>' --data '{"type":"row.created","id":"r_1"}'`,
    },
    notes: [
      'A static token proves only that the sender knows it; it does not protect the body. Prefer a signing mode when the sender supports one.',
    ],
    handshake: null,
  },
  basic: {
    mode: 'basic',
    title: 'HTTP Basic',
    summary:
      'HTTP Basic authentication with a generated user and password; for senders that only support credentials in the URL or Basic auth.',
    senders: ['Legacy systems', 'Senders with a "username/password" webhook option'],
    headers: [{ name: 'Authorization', description: '`Basic base64(<USER>:<PASSWORD>)`.' }],
    signedContent: null,
    encoding: 'HTTP Basic (RFC 7617); user and password compared in constant time',
    secretFormat: 'Generated user `fp_…` and password (the secret).',
    toleranceSec: null,
    multipleSignatures: false,
    externalId: null,
    eventType: null,
    secretEnv: null,
    createOptions: ' [--basic-user <USER>] [--external-id-path <PATH>]',
    example: {
      language: 'sh',
      code: `curl -sS -X POST '<INGEST_URL>' -u '<USER>:<PASSWORD>' -H 'Content-Type: application/json' --data '{"type":"thing.happened","id":"t_1"}'`,
    },
    notes: ['Basic auth proves only that the sender knows the password; it does not protect the body.'],
    handshake: null,
  },
};

export const AUTH_MODE_LIST: readonly AuthModeFacts[] = Object.values(AUTH_MODE_FACTS);

/** `npx flowport endpoints create …` for a mode (placeholders), importing the secret when the sender makes it. */
export function createCommandFor(f: AuthModeFacts): string {
  const secret = f.secretEnv ? ` --secret-env ${f.secretEnv}` : '';
  return `npx flowport endpoints create --shop <SHOP_ID> --name "<NAME>" --auth-mode ${f.mode} --trigger-variant external_event${f.createOptions}${secret} --json`;
}

/** `npx flowport endpoints import-secret …` for a mode whose sender makes the secret (placeholders). */
export function importSecretCommandFor(f: AuthModeFacts): string | null {
  return f.secretEnv
    ? `npx flowport endpoints import-secret --endpoint <ENDPOINT_ID> --secret-env ${f.secretEnv} --json`
    : null;
}

/**
 * Whether a verified request is the mode's handshake, and what to echo: null for an ordinary
 * event; `{ challenge }` for a challenge handshake; `{ challenge: null }` for a ping. A
 * challenge handshake without a usable challenge (not a string, empty, over 512 characters)
 * is an ordinary event.
 */
export function handshakeOf(
  mode: AuthMode,
  headers: { get(name: string): string | null },
  body: Record<string, unknown>,
): { challenge: string | null } | null {
  const h = AUTH_MODE_FACTS[mode].handshake;
  if (!h) return null;
  if (h.kind === 'ping') return headers.get(h.header)?.trim() === h.value ? { challenge: null } : null;
  if (body[h.typeField] !== h.type) return null;
  const challenge = body[h.challengeField];
  return typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 512 ? { challenge } : null;
}

/** Where intake reads the external id from, for an endpoint's config (null: nothing to dedupe on). */
export function externalIdSourceOf(config: Pick<EndpointConfig, 'authMode' | 'mapping'>): ValueSource | null {
  const ext = effectiveExternalId(config);
  return ext.kind === 'preset'
    ? AUTH_MODE_FACTS[config.authMode].externalId
    : ext.kind === 'header'
      ? { from: 'header', names: [ext.name.toLowerCase()] }
      : ext.kind === 'json'
        ? { from: 'json', path: ext.path }
        : null;
}

/**
 * What an endpoint's signature covers, for its config: the one derivation a refusal's detail and
 * its receipt's failure state (`the raw body`, or `{x-ts}.{body}` when hmac_sha256 has a timestamp
 * header). Null for modes that sign nothing (static_header, basic).
 */
export function signedContentOf(mode: AuthMode, timestampHeader: string | null = null): string | null {
  switch (mode) {
    case 'hmac_sha256':
      return timestampHeader
        ? `\`{${timestampHeader}}.{body}\` (the ${timestampHeader} header's value, a dot, then the raw body)`
        : 'the raw body';
    case 'github':
    case 'shopify':
      return 'the raw body';
    case 'stripe':
      return "`{t}.{body}` (Stripe-Signature's t= value, a dot, then the raw body)";
    case 'standard_webhooks':
      return "`{webhook-id}.{webhook-timestamp}.{body}` (the two headers' values and the raw body, joined by dots)";
    case 'slack':
      return '`v0:{x-slack-request-timestamp}:{body}`';
    default:
      return null;
  }
}
