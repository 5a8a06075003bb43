// A read operation, declared once. Every read is the same contract: a GET under the agent API
// that changes nothing; its operationId, MCP tool name and CLI command are spelled from one
// name by the rule in ./naming.ts (ADR 1000). What differs per read is what the spec below holds.
import type { z } from '@hono/zod-openapi';
import { defineOperation, type Operation, type OperationRequest } from '../core/types.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { AGENT_API_PREFIX } from '../lib/package-info.ts';
import { cliWordsFor, operationIdFor } from './naming.ts';

/** What a read declares: an operation without what every read shares or derives from `name`. */
export type ReadSpec<R extends OperationRequest, O extends z.ZodType> = Omit<
  Operation<R, O>,
  'operationId' | 'method' | 'path' | 'kind' | 'request' | 'errors' | 'mcp' | 'cli'
> & {
  /** The one name (`get_event`): MCP tool as is, operationId in camelCase, CLI command in kebab-case. */
  name: string;
  /** Path under the agent API prefix, e.g. `/events/{event_id}`. */
  path: string;
  /** Path and query parameters; none when absent. */
  request?: R;
  /** Error codes beyond the common ones for its scope; none when absent. */
  errors?: readonly ErrorCode[];
  /** The MCP tool's title and job-language description (its name is `name`). */
  mcp: { title: string; description: string };
};

/** Declares a read: `GET <AGENT_API_PREFIX><path>`, kind `read`, named from `spec.name`. */
export function defineRead<R extends OperationRequest = Record<never, never>, O extends z.ZodType = z.ZodType>(
  spec: ReadSpec<R, O>,
): Operation<R, O> {
  const { name, path, request, errors, mcp, ...rest } = spec;
  return defineOperation({
    ...rest,
    operationId: operationIdFor(name),
    method: 'get',
    path: `${AGENT_API_PREFIX}${path}`,
    kind: 'read',
    request: request ?? ({} as R),
    errors: errors ?? [],
    mcp: { name, ...mcp },
    cli: cliWordsFor(name),
  });
}
