// The agent commands as the CLI runs them: a table generated from the operation registry
// (`npm run openapi` writes ./agent-commands.json with the OpenAPI file; `npm run
// check:openapi` fails when either is stale; ./api-commands.ts derives it). The CLI reads this
// table instead of importing the registry, so `flowport --help` or an agent read loads a few
// small modules, not the server (ADR 0900, docs/architecture.md).
import table from './agent-commands.json' with { type: 'json' };
import type { CommandOption } from './definitions.ts';

export { GENERATED_HEADERS } from './definitions.ts';

/** How an option's text becomes a request value. */
export type ValueKind = 'string' | 'number' | 'boolean' | 'json';

export interface AgentOption extends CommandOption {
  /** Parsed name (`--event-type <value>` → `event-type`). */
  name: string;
  /** The field as the API names it (`event_type`, `idempotency-key`). */
  field: string;
  location: 'query' | 'body' | 'header';
  kind: ValueKind;
  choices?: readonly string[];
}

export interface AgentArgument {
  /** The path parameter (`event_id`). */
  name: string;
  description: string;
}

/** What the CLI needs to know about the operation behind an agent command. */
export interface AgentOperation {
  operationId: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI path template, e.g. `/agent/v1/events/{event_id}`. */
  path: string;
  summary: string;
  description: string;
  family: string;
  /** Required scope; null = public. */
  scope: string | null;
  /** What a grant really needs when `scope` only admits the call (confirm, cancel). */
  scopeNote?: string;
  /** One of these scopes is needed besides `scope`. */
  scopeAnyOf?: readonly string[];
  /** CLI command words, e.g. ['list-events']. */
  cli: readonly string[];
  /** The operation answers an action intent (rendered as one, with next steps). */
  intent: boolean;
  /** The operation takes a JSON body. */
  body: boolean;
}

export interface AgentCommand {
  op: AgentOperation;
  words: readonly string[];
  args: AgentArgument[];
  options: AgentOption[];
}

/** Every agent command, in registry order. */
export const AGENT_COMMANDS: readonly AgentCommand[] = table as unknown as AgentCommand[];

export function agentCommandById(operationId: string): AgentCommand {
  const cmd = AGENT_COMMANDS.find((c) => c.op.operationId === operationId);
  if (!cmd) throw new Error(`No agent command for ${operationId}: run \`npm run openapi\`.`);
  return cmd;
}
