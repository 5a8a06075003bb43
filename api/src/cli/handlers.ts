// Operator command handlers, keyed by command words joined with a space, loaded only when
// their command runs (help, completion and agent commands never load them or what they
// import: the store, the server). Store handlers get the opened local store; standalone
// handlers (definitions with `store: false`) manage their own resources. See the contract
// in ./definitions.ts.
import type { Services } from '../core/types.ts';
import type { CliIO } from './io.ts';
import type { OperatorCommand } from './definitions.ts';
import { GRANTS_OPERATOR_COMMANDS } from './operator/grants-commands.ts';
import { HANDOFF_OPERATOR_COMMANDS } from './operator/handoff-commands.ts';
import { PROCESS_OPERATOR_COMMANDS } from './operator/process-commands.ts';
import { SANDBOX_INSTALL_COMMANDS } from './operator/sandbox-commands.ts';
import { SHOPS_OPERATOR_COMMANDS } from './operator/shops-commands.ts';

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface HandlerResult {
  /** Printed as JSON with --json or when stdout is not a terminal; else `text` (or JSON when no text). */
  json: unknown;
  text?: string;
  exitCode?: number;
}

export interface OperatorContext {
  options: OptionValues;
  /** Positional arguments after the command words. */
  args: string[];
  /** The CLI's environment (not yet overridden by --data-dir). */
  env: Record<string, string | undefined>;
  io: CliIO;
}

export type OperatorHandler = (ctx: OperatorContext & { services: Services }) => Promise<HandlerResult>;
export type StandaloneHandler = (ctx: OperatorContext) => Promise<HandlerResult>;

export interface HandlerModule {
  /** Handlers of commands that act on the local store (the runner opens and closes it). */
  store: Record<string, OperatorHandler>;
  /** Handlers of commands defined with `store: false`. */
  standalone: Record<string, StandaloneHandler>;
}

/** Each group of operator commands and the module that handles them. */
const GROUPS: readonly [commands: readonly OperatorCommand[], load: () => Promise<HandlerModule>][] = [
  [
    SHOPS_OPERATOR_COMMANDS,
    async () => ({ store: (await import('./operator/shops.ts')).SHOPS_OPERATOR_HANDLERS, standalone: {} }),
  ],
  [
    HANDOFF_OPERATOR_COMMANDS,
    async () => {
      const m = await import('./operator/handoff.ts');
      return { store: m.HANDOFF_OPERATOR_HANDLERS, standalone: m.HANDOFF_STANDALONE_HANDLERS };
    },
  ],
  [
    GRANTS_OPERATOR_COMMANDS,
    async () => ({ store: (await import('./operator/grants.ts')).GRANTS_OPERATOR_HANDLERS, standalone: {} }),
  ],
  [
    SANDBOX_INSTALL_COMMANDS,
    async () => ({ store: {}, standalone: (await import('./operator/sandbox.ts')).SANDBOX_INSTALL_HANDLERS }),
  ],
  [
    PROCESS_OPERATOR_COMMANDS,
    async () => ({ store: {}, standalone: (await import('./operator/process.ts')).PROCESS_OPERATOR_HANDLERS }),
  ],
];

/** Loads the module that handles `def` (and only that one). */
export async function handlersFor(def: OperatorCommand): Promise<HandlerModule> {
  const group = GROUPS.find(([commands]) => commands.includes(def));
  if (!group) throw new Error(`No handler module for ${def.command.join(' ')}.`);
  return group[1]();
}

/** Every handler module (tests check each definition has its handler). */
export async function allHandlers(): Promise<HandlerModule> {
  const modules = await Promise.all(GROUPS.map(([, load]) => load()));
  return {
    store: Object.assign({}, ...modules.map((m) => m.store)),
    standalone: Object.assign({}, ...modules.map((m) => m.standalone)),
  };
}
