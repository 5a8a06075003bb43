// Command definitions the CLI parser, `--help`, shell completion and the
// reference page (/reference/cli/) all derive from. Three kinds, kept apart in
// help and docs:
// - agent commands: from the table generated from the operation registry (./agent-table.ts), not listed here;
// - helper commands (docs, doctor, completion): client-side, no local store;
// - operator commands: a human on the host, acting on the local store; never
//   reachable through the API or MCP.
//
// Operator command contract (for anyone adding one): add its definition to
// a `<area>-commands.ts` file under ./operator/ (listed in OPERATOR_COMMANDS) and its
// handler to the handlers of that area's module (./operator/<area>.ts, registered in
// ./handlers.ts) under the same words joined by a space. Handlers are loaded only when
// their command runs, so help and agent commands never load them. The runner opens the local store (worker
// off, logs silent) unless the definition sets `store: false`, calls the handler
// with the parsed options, the services (or null), the CLI's environment and IO,
// and AWAITS the handler's promise before printing its result and closing the
// store. A long-running handler (a server until SIGINT/SIGTERM) simply resolves
// when it has stopped; it may print progress through `io` meanwhile.

import { CLI_ENV } from '../config.ts';
import { LOCAL_SERVER_RULE } from '../lib/served-url-file.ts';
import { GRANTS_OPERATOR_COMMANDS } from './operator/grants-commands.ts';
import { HANDOFF_OPERATOR_COMMANDS } from './operator/handoff-commands.ts';
import { PROCESS_OPERATOR_COMMANDS } from './operator/process-commands.ts';
import { SANDBOX_INSTALL_COMMANDS } from './operator/sandbox-commands.ts';
import { SHOPS_OPERATOR_COMMANDS } from './operator/shops-commands.ts';

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

/** Options the CLI fills itself when omitted (printed so a retry can reuse them). */
export const GENERATED_HEADERS: Record<string, string> = {
  'idempotency-key':
    'Makes the confirmation safe to retry: the same key and request return the stored response. Generated (and printed to stderr) when omitted; pass the printed key to retry.',
};

/** How the base URL is found when neither FLOWPORT_BASE_URL nor --base-url names it (lib/served-url-file.ts). */
export const DEFAULT_BASE_URL_RULE = LOCAL_SERVER_RULE;

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
    description: `Flowport's base URL. Default: \`${CLI_ENV.baseUrl}\`, else ${DEFAULT_BASE_URL_RULE}.`,
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
    command: ['watch-action-intent'],
    summary:
      'Follow a running action intent (a bulk replay) until it ends: a progress bar on a terminal, the final intent as JSON otherwise. Needs intents:read.',
    args: [{ name: 'intent_id', description: 'The intent to follow (`int_…`).' }],
    options: [
      ...CONNECTION_OPTIONS,
      { flag: '--interval-ms <ms>', description: 'How often to read the intent (default 2000, at least 500).' },
    ],
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

export const OPERATOR_COMMANDS: OperatorCommand[] = byGroup([
  ...SHOPS_OPERATOR_COMMANDS,
  ...HANDOFF_OPERATOR_COMMANDS,
  ...SANDBOX_INSTALL_COMMANDS,
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
