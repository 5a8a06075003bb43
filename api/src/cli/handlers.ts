// Operator command handlers, keyed by command words joined with a space.
// Store handlers get the opened local store; standalone handlers (definitions
// with `store: false`) manage their own resources. See the contract in
// ./definitions.ts.
import { GRANTS_OPERATOR_HANDLERS } from './operator/grants.ts';
import { HANDOFF_OPERATOR_HANDLERS, HANDOFF_STANDALONE_HANDLERS } from './operator/handoff.ts';
import { INTAKE_OPERATOR_HANDLERS } from './operator/shops.ts';
import type { Services } from '../core/types.ts';
import { PROCESS_OPERATOR_HANDLERS } from './operator/process.ts';
import type { CliIO } from './io.ts';

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

/** Handlers of operator commands that act on the local store (the runner opens and closes it). */
export const OPERATOR_HANDLERS: Record<string, OperatorHandler> = {
  ...INTAKE_OPERATOR_HANDLERS,
  ...HANDOFF_OPERATOR_HANDLERS,
  ...GRANTS_OPERATOR_HANDLERS,
};

/** Handlers of operator commands defined with `store: false`. */
export const STANDALONE_HANDLERS: Record<string, StandaloneHandler> = {
  ...HANDOFF_STANDALONE_HANDLERS,
  ...PROCESS_OPERATOR_HANDLERS,
};
