// Operator commands for shops and sender endpoints: `shops list|create`, `endpoints
// create|import-secret`. Definitions only; the handlers are in ./shops.ts, loaded when one of
// these commands runs.
import { PLAN_IDS } from '../../plans.ts';
import { MAX_ROTATION_OVERLAP_HOURS } from '../../services/endpoints.ts';
import { AUTH_MODES, TRIGGER_VARIANTS } from '../../store/tables/endpoints.ts';
import type { OperatorCommand } from '../definitions.ts';

export const SHOPS_OPERATOR_COMMANDS: OperatorCommand[] = [
  {
    command: ['shops', 'list'],
    summary: 'List the shops in the local store: id, domain, plan, sandbox, connection state (never tokens).',
    options: [],
  },
  {
    command: ['shops', 'create'],
    summary: 'Create a shop in the local store (a real Shopify store, or a sandbox one).',
    options: [
      { flag: '--domain <domain>', description: 'The store domain, e.g. example.myshopify.com.', required: true },
      { flag: '--plan <plan>', description: `Plan id: ${PLAN_IDS.join(', ')} (default free).`, choices: PLAN_IDS },
      {
        flag: '--sandbox',
        description: 'Mark the shop as a sandbox shop (handoff goes to the local Shopify stand-in).',
      },
      {
        flag: '--access-token-env <name>',
        description: 'Read the Admin API access token from this environment variable (kept out of shell history).',
      },
    ],
  },
  {
    command: ['endpoints', 'create'],
    summary: 'Create a sender endpoint; prints its ingest URL and its secret (shown only here, once).',
    options: [
      { flag: '--shop <shopId>', description: 'The shop id (shop_…).', required: true },
      { flag: '--name <name>', description: 'A name for people.', required: true },
      {
        flag: '--auth-mode <mode>',
        description: `One of: ${AUTH_MODES.join(', ')}.`,
        required: true,
        choices: AUTH_MODES,
      },
      {
        flag: '--trigger-variant <variant>',
        description: `One of: ${TRIGGER_VARIANTS.join(', ')}.`,
        required: true,
        choices: TRIGGER_VARIANTS,
      },
      { flag: '--sender-label <label>', description: 'Passed to Flow as Source (default: the auth mode).' },
      {
        flag: '--resource-id-path <path>',
        description: 'JSON path of the Shopify id (numeric or GID); required for order/customer/product variants.',
      },
      { flag: '--related-resource-id-path <path>', description: 'JSON path of a related Shopify id (optional).' },
      { flag: '--required-path <path>', description: 'A JSON path that must be present (up to 5).', multiple: true },
      {
        flag: '--event-type-path <path>',
        description: 'JSON path of the event type (default `type`; presets read their own header first).',
      },
      { flag: '--external-id-header <header>', description: 'Dedupe on this header instead of the preset source.' },
      { flag: '--external-id-path <path>', description: 'Dedupe on this JSON path instead of the preset source.' },
      {
        flag: '--dedupe-window-hours <hours>',
        description: "Dedupe window; at most the plan's window (default: the plan's).",
      },
      {
        flag: '--signature-header <header>',
        description: 'hmac_sha256: the signature header (default x-flowport-signature).',
      },
      {
        flag: '--signature-encoding <encoding>',
        description: 'hmac_sha256: hex (default) or base64.',
        choices: ['hex', 'base64'],
      },
      {
        flag: '--signature-prefix <prefix>',
        description: 'hmac_sha256: prefix before the signature (default `sha256=`; empty for none).',
      },
      {
        flag: '--timestamp-header <header>',
        description: 'hmac_sha256: a signed timestamp header (content becomes `{timestamp}.{body}`).',
      },
      { flag: '--tolerance-sec <seconds>', description: 'Timestamp tolerance for modes that sign one (default 300).' },
      { flag: '--static-header <header>', description: 'static_header: the header name (default x-flowport-token).' },
      { flag: '--basic-user <user>', description: 'basic: the user name (default generated).' },
      {
        flag: '--secret-env <name>',
        description:
          "Import the sender's signing secret from this environment variable (Stripe, Shopify, Slack, Svix) instead of generating one.",
      },
    ],
  },
  {
    command: ['endpoints', 'import-secret'],
    summary:
      "Replace an endpoint's secret with one the sender made (Stripe shows it only once it has the ingest URL). Never prints the secret.",
    options: [
      { flag: '--endpoint <endpoint_id>', description: 'The endpoint id (ep_…).', required: true },
      {
        flag: '--secret-env <name>',
        description: 'The environment variable holding the secret (so it never appears in the arguments or output).',
        required: true,
      },
      {
        flag: '--overlap-hours <hours>',
        description: `How long the previous secret keeps verifying, 0–${MAX_ROTATION_OVERLAP_HOURS} (default 0).`,
      },
    ],
  },
];
