// Operator commands: what a human runs on the host against the local store
// (never reachable through the API or MCP). The CLI parser and the reference page
// (/reference/cli/) both derive from this list plus the registry's `cli` fields.
// Handlers live in ./handlers.ts, keyed by the command words.

import { GRANTS_OPERATOR_COMMANDS } from '../auth/cli.ts';
import { HANDOFF_OPERATOR_COMMANDS } from '../handoff/cli.ts';

export interface OperatorCommandOption {
  /** As typed, e.g. `--tier <tier>` (takes a value) or `--json` (a switch). */
  flag: string;
  description: string;
  required?: boolean;
  /** May be given several times (values collected into a list). */
  multiple?: boolean;
}

export interface OperatorCommand {
  /** Command words after `flowport`, e.g. ['grants', 'create']. */
  command: string[];
  summary: string;
  options: OperatorCommandOption[];
}

/** Options every operator command accepts. */
export const COMMON_OPERATOR_OPTIONS: OperatorCommandOption[] = [
  { flag: '--json', description: 'Print machine-readable JSON instead of text.' },
  {
    flag: '--data-dir <dir>',
    description: 'Data directory of the local store (default ./data, or FLOWPORT_DATA_DIR).',
  },
];

/** Options every API command (derived from the registry) accepts. */
export const COMMON_API_OPTIONS: OperatorCommandOption[] = [
  { flag: '--url <url>', description: 'Flowport base URL (default FLOWPORT_URL or http://localhost:8787).' },
  {
    flag: '--token <token>',
    description:
      'Grant token (default FLOWPORT_GRANT_TOKEN). Prefer the environment variable so the token stays out of shell history.',
  },
];

export const OPERATOR_COMMANDS: OperatorCommand[] = [
  ...HANDOFF_OPERATOR_COMMANDS,
  ...GRANTS_OPERATOR_COMMANDS,
  // ---- intake setup (shops, endpoints) ----
  {
    command: ['shops', 'create'],
    summary: 'Create a shop in the local store (a real Shopify store, or a sandbox one).',
    options: [
      { flag: '--domain <domain>', description: 'The store domain, e.g. example.myshopify.com.', required: true },
      { flag: '--plan <plan>', description: 'Plan id: free (default), starter, growth or scale.' },
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
        description: 'hmac_sha256, github, shopify, stripe, standard_webhooks, slack, static_header or basic.',
        required: true,
      },
      {
        flag: '--trigger-variant <variant>',
        description: 'external_event, external_order_event, external_customer_event or external_product_event.',
        required: true,
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
      { flag: '--signature-encoding <encoding>', description: 'hmac_sha256: hex (default) or base64.' },
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
];

/** Option name as parsed (`--actor-kind <kind>` → `actor-kind`). */
export function optionName(o: OperatorCommandOption): string {
  return (o.flag.split(/\s+/)[0] ?? '').replace(/^--/, '');
}

export function optionTakesValue(o: OperatorCommandOption): boolean {
  return /\s<[^>]+>/.test(o.flag);
}
