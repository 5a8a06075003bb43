// Command definitions the CLI parser, `--help`, shell completion and the
// reference page (/reference/cli/) all derive from. Three kinds, kept apart in
// help and docs:
// - agent commands: derived from the operation registry (./api-commands.ts), not listed here;
// - helper commands (docs, doctor, completion): client-side, no local store;
// - operator commands: a human on the host, acting on the local store; never
//   reachable through the API or MCP.
//
// Operator command contract (for anyone adding one): add its definition to
// OPERATOR_COMMANDS and its handler to OPERATOR_HANDLERS (./handlers.ts) under
// the same words joined by a space. The runner opens the local store (worker
// off, logs silent) unless the definition sets `store: false`, calls the handler
// with the parsed options, the services (or null), the CLI's environment and IO,
// and AWAITS the handler's promise before printing its result and closing the
// store. A long-running handler (a server until SIGINT/SIGTERM) simply resolves
// when it has stopped; it may print progress through `io` meanwhile.

import { GRANTS_OPERATOR_COMMANDS } from './operator/grants.ts';
import { CLI_ENV, DEFAULT_PORT } from '../config.ts';
import { HANDOFF_OPERATOR_COMMANDS } from './operator/handoff.ts';
import { PLAN_IDS } from '../plans.ts';
import { PROCESS_OPERATOR_COMMANDS } from './operator/process-commands.ts';
import { AUTH_MODES, MAX_ROTATION_OVERLAP_HOURS, TRIGGER_VARIANTS } from '../services/endpoints.ts';

export interface CommandOption {
  /** As typed, e.g. `--tier <tier>` (takes a value) or `--json` (a switch). */
  flag: string;
  description: string;
  required?: boolean;
  /** May be given several times (values collected into a list). */
  multiple?: boolean;
  /** Allowed values (shell completion offers them). */
  choices?: readonly string[];
}

/** Kept for the operator-command modules that name it. */
export type OperatorCommandOption = CommandOption;

export interface CommandArgument {
  name: string;
  description: string;
  choices?: readonly string[];
}

export interface OperatorCommand {
  /** Command words after `flowport`, e.g. ['grants', 'create']. */
  command: string[];
  summary: string;
  options: CommandOption[];
  /** Positional arguments after the words. */
  args?: CommandArgument[];
  /** false: the runner opens no store and passes `services: null` (the handler manages its own resources). */
  store?: boolean;
}

export const DEFAULT_BASE_URL = `http://localhost:${DEFAULT_PORT}`;

/** Accepted by every command. */
export const GLOBAL_OPTIONS: CommandOption[] = [
  {
    flag: '--json',
    description: 'Print JSON. The default when stdout is not a terminal; on a terminal the default is readable text.',
  },
  { flag: '--help', description: "Show the command's arguments and options." },
];

/** Where Flowport is and which grant to use: agent commands and `doctor` (`docs` takes the base URL only). */
export const CONNECTION_OPTIONS: CommandOption[] = [
  {
    flag: '--base-url <url>',
    description: `Flowport's base URL. Default: \`${CLI_ENV.baseUrl}\`, else ${DEFAULT_BASE_URL}.`,
  },
  {
    flag: '--token-file <path>',
    description: `Read the grant token from this file (first line). Default: the \`${CLI_ENV.token}\` environment variable. There is no token flag, so the token never lands in shell history.`,
  },
];

/** Options every operator command accepts. */
export const COMMON_OPERATOR_OPTIONS: CommandOption[] = [
  {
    flag: '--data-dir <dir>',
    description: 'Data directory of the local store (default ./data, or FLOWPORT_DATA_DIR).',
  },
];

export const COMPLETION_SHELLS = ['bash', 'zsh'] as const;

/** Client-side helpers: no local store, and no grant except for doctor's grant checks. */
export const HELPER_COMMANDS: OperatorCommand[] = [
  {
    command: ['docs'],
    summary:
      'Print where the docs live: llms.txt, the Markdown twins, the manifest, the OpenAPI contract, and the CLI and MCP references. No grant needed.',
    options: [CONNECTION_OPTIONS[0] as CommandOption],
    store: false,
  },
  {
    command: ['doctor'],
    summary:
      'Check the connection end to end: reachability, edition identity, the grant (valid, expiry, scopes) and plan headroom; say what to fix.',
    options: CONNECTION_OPTIONS,
    store: false,
  },
  {
    command: ['completion'],
    summary: 'Print a shell completion script for bash or zsh.',
    args: [{ name: 'shell', description: 'bash or zsh.', choices: COMPLETION_SHELLS }],
    options: [],
    store: false,
  },
];

/** Help and docs list operator commands in this order of their first word (others after, as added). */
const OPERATOR_GROUP_ORDER = [
  'serve',
  'worker',
  'migrate',
  'migrate-data',
  'sandbox',
  'shops',
  'endpoints',
  'grants',
  'audit',
];

function byGroup(commands: OperatorCommand[]): OperatorCommand[] {
  const rank = (c: OperatorCommand) => {
    const i = OPERATOR_GROUP_ORDER.indexOf(c.command[0] ?? '');
    return i === -1 ? OPERATOR_GROUP_ORDER.length : i;
  };
  return [...commands].sort((a, b) => rank(a) - rank(b));
}

const INTAKE_OPERATOR_COMMANDS: OperatorCommand[] = [
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
      { flag: '--endpoint <endpointId>', description: 'The endpoint id (ep_…).', required: true },
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

export const OPERATOR_COMMANDS: OperatorCommand[] = byGroup([
  ...INTAKE_OPERATOR_COMMANDS,
  ...HANDOFF_OPERATOR_COMMANDS,
  ...GRANTS_OPERATOR_COMMANDS,
  ...PROCESS_OPERATOR_COMMANDS,
]);

/** Option name as parsed (`--actor-kind <kind>` → `actor-kind`). */
export function optionName(o: CommandOption): string {
  return (o.flag.split(/\s+/)[0] ?? '').replace(/^--/, '');
}

export function optionTakesValue(o: CommandOption): boolean {
  return /\s<[^>]+>/.test(o.flag);
}
