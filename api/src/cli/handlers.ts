// Operator command handlers, keyed by command words joined with a space.
// Each handler gets parsed option values and the local store; it returns what to print.
import { GRANTS_OPERATOR_HANDLERS } from '../auth/cli.ts';
import { HANDOFF_OPERATOR_HANDLERS } from '../handoff/cli.ts';
import { INTAKE_OPERATOR_HANDLERS } from '../intake/cli.ts';
import type { Services } from '../operations/types.ts';

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface HandlerResult {
  /** Printed as JSON with --json, else `text` (or JSON when no text). */
  json: unknown;
  text?: string;
  exitCode?: number;
}

export type OperatorHandler = (args: { options: OptionValues; services: Services }) => Promise<HandlerResult>;

export const OPERATOR_HANDLERS: Record<string, OperatorHandler> = {
  ...INTAKE_OPERATOR_HANDLERS,
  ...HANDOFF_OPERATOR_HANDLERS,
  ...GRANTS_OPERATOR_HANDLERS,
};
