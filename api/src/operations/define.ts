// Operations declared from one name. An operation's operationId, MCP tool name and CLI command
// are spelled from its one snake_case name by the rule in ./naming.ts (ADR 1000), and its path
// hangs under the agent API prefix; a read is, besides, always a GET that changes nothing.
// (The previews are declared from their own table, ./intents/previews.ts.)
import type { z } from '@hono/zod-openapi';
import { defineOperation, type Operation, type OperationRequest } from '../core/types.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { AGENT_API_PREFIX } from '../lib/package-info.ts';
import { cliWordsFor, operationIdFor } from './naming.ts';

/** What an operation declares: everything but what is derived from `name` or left empty by default. */
export type NamedSpec<R extends OperationRequest, O extends z.ZodType, S extends string | null = string | null> = Omit<
  Operation<R, O, S>,
  'operationId' | 'path' | 'request' | 'errors' | 'mcp' | 'cli'
> & {
  /** The one name (`get_event`): MCP tool as is, operationId in camelCase, CLI command in kebab-case. */
  name: string;
  /** Path under the agent API prefix, e.g. `/events/{event_id}`. */
  path: string;
  /** Path, query and body schemas; none when absent. */
  request?: R;
  /** Error codes beyond the common ones for its scope; none when absent. */
  errors?: readonly ErrorCode[];
  /** The MCP tool's title and job-language description (its name is `name`). */
  mcp: { title: string; description: string };
};

/** Declares an operation at `<AGENT_API_PREFIX><path>`, named from `spec.name`. */
export function defineNamed<
  R extends OperationRequest = Record<never, never>,
  O extends z.ZodType = z.ZodType,
  S extends string | null = string | null,
>(spec: NamedSpec<R, O, S>): Operation<R, O, S> {
  const { name, path, request, errors, mcp, ...rest } = spec;
  return defineOperation({
    ...rest,
    operationId: operationIdFor(name),
    path: `${AGENT_API_PREFIX}${path}`,
    request: request ?? ({} as R),
    errors: errors ?? [],
    mcp: { name, ...mcp },
    cli: cliWordsFor(name),
  });
}

/** What a read declares: a named operation without its method and kind. */
export type ReadSpec<R extends OperationRequest, O extends z.ZodType, S extends string | null = string | null> = Omit<
  NamedSpec<R, O, S>,
  'method' | 'kind'
>;

/** Declares a read: `GET <AGENT_API_PREFIX><path>`, kind `read`, named from `spec.name`. */
export function defineRead<
  R extends OperationRequest = Record<never, never>,
  O extends z.ZodType = z.ZodType,
  S extends string | null = string | null,
>(spec: ReadSpec<R, O, S>): Operation<R, O, S> {
  return defineNamed<R, O, S>({ ...spec, method: 'get', kind: 'read' } as NamedSpec<R, O, S>);
}
