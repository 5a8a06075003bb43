// Builds the MCP server instance for one HTTP request: every registry operation
// with `mcp` becomes a tool whose call goes through invokeOperation() (the same
// authenticate → authorize → admit → run path as HTTP), plus the docs pages and
// the OpenAPI contract as resources.
import type { z } from '@hono/zod-openapi';
import { McpServer, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { errorDocsPath, joinUrl } from '../docs-paths.ts';
import { AppError, type Problem, toProblem } from '../errors/problem.ts';
import { reportUndeclaredError } from '../http/declared-errors.ts';
import { MCP_PATH, PRODUCT } from '../lib/package-info.ts';
import { refuseUnknownFields, unknownFields } from '../operations/closed-input.ts';
import { invokeOperation } from '../operations/pipeline.ts';
import type { AnyOperation, Principal, Services } from '../core/types.ts';
import { markdownTwinPath } from '../services/docs.ts';
import { registerResources } from './resources.ts';
import { stepUpRefusal } from './step-up.ts';
import { neededScopes } from '../oauth/challenge.ts';
import { renamedTools } from '../operations/naming.ts';
import {
  headerInputName,
  mcpOperations,
  outputSchemaPath,
  toolAnnotations,
  toolDescription,
  toolInputJsonSchema,
  toolInputSchema,
} from './tools.ts';

export interface McpCallContext {
  services: Services;
  operations: readonly AnyOperation[];
  requestId: string;
  token: string | null;
  /** Authenticated once per HTTP request by the transport. */
  principal: Principal;
  /** Lowercased request headers of the MCP HTTP request. */
  requestHeaders: Record<string, string | undefined>;
  /** Set when a tool call was refused for a scope this OAuth token lacks (answered 403 by the transport). */
  scopeRefusal?: AppError;
  /**
   * Each tools/call's `arguments` as JSON.parse read them, by JSON-RPC id: the SDK's parse copies
   * them and drops a `__proto__` key, which the closed-input check must still see and refuse.
   */
  rawArguments?: ReadonlyMap<string | number, unknown>;
}

export const MCP_SERVER_INSTRUCTIONS = [
  `${PRODUCT.name} relays outside events into Shopify Flow and records a receipt for each.`,
  'Start with get_manifest: it lists every capability, the scope each needs and the safety boundaries.',
  'Side effects are action intents: call a preview tool first, read its effects and warnings, then confirm it with the matching confirm tool (needs an execute scope).',
  "A tool's result is the HTTP response of its operation, as structuredContent; its full shape, every field described, is the resource at the tool's _meta['flowport/output_schema'] (also get_open_api_operation).",
  "When a tool returns isError, read the problem: refusal.reason says why, refusal.next_steps says what to do (docs page, manifest, OpenAPI, then ask a human); over MCP the manifest is get_manifest and an operation's contract get_open_api_operation. Never try to work around a refusal.",
].join(' ');

/**
 * A Standard Schema that advertises a JSON Schema but accepts any value: the tool handler
 * validates with the same zod schema the HTTP route uses, so an invalid call gets the same
 * `invalid_request` problem (with `errors[]`) instead of the SDK's plain-text error. The
 * advertised schema is toolInputJsonSchema (ADR 0510).
 */
function advertiseJson(json: Record<string, unknown>): StandardSchemaWithJSON<Record<string, unknown>> {
  return {
    '~standard': {
      version: 1 as const,
      vendor: 'flowport',
      validate: (value: unknown) => ({ value: (value ?? {}) as Record<string, unknown> }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

type ToolResult = {
  content: (
    | { type: 'text'; text: string }
    | { type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string }
  )[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
};

/** The MCP form of a failure: the same problem object the HTTP API returns, plus a link to its docs page as Markdown. */
export function problemToolResult(problem: Problem, publicUrl: string): ToolResult {
  const mdUrl = joinUrl(publicUrl, markdownTwinPath(errorDocsPath(problem.code)));
  const summary = problem.refusal
    ? `Refused (${problem.refusal.layer}): ${problem.refusal.reason}${problem.refusal.required_scope ? ` Required scope: ${problem.refusal.required_scope}.` : ''} Docs: ${problem.docs_url}`
    : `${problem.title}: ${problem.detail} Docs: ${problem.docs_url}`;
  return {
    isError: true,
    content: [
      { type: 'text', text: JSON.stringify(problem) },
      { type: 'text', text: summary },
      {
        type: 'resource_link',
        uri: mdUrl,
        name: problem.code,
        title: `Error ${problem.code}: ${problem.title}`,
        description: 'What this error means and what to do, as Markdown.',
        mimeType: 'text/markdown',
      },
    ],
    // Not structuredContent: it is reserved for the tool's outputSchema and 2025-era clients validate it even on errors.
    _meta: { 'flowport/problem': problem },
  };
}

function zodIssues(error: z.ZodError) {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}

export async function callOperationTool(
  op: AnyOperation,
  args: unknown,
  call: McpCallContext,
  jsonRpcId?: string | number,
): Promise<ToolResult> {
  const { services } = call;
  const publicUrl = services.config.publicUrl;
  try {
    const schema = toolInputSchema(op);
    // The arguments as sent (own keys, `__proto__` included) when the transport kept them.
    const sent = jsonRpcId !== undefined && call.rawArguments?.has(jsonRpcId) ? call.rawArguments.get(jsonRpcId) : args;
    refuseUnknownFields(unknownFields(schema, sent ?? {}, 'arguments'));
    const parsed = schema.safeParse(args ?? {});
    if (!parsed.success) {
      const errors = zodIssues(parsed.error);
      throw new AppError('invalid_request', {
        detail: `Invalid arguments for ${op.mcp?.name}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
        errors,
      });
    }
    const input: Record<string, unknown> = { ...parsed.data };
    const headers: Record<string, string | undefined> = {};
    for (const h of op.headers ?? []) {
      const field = headerInputName(h);
      const fromArgs = input[field];
      headers[h] = typeof fromArgs === 'string' ? fromArgs : call.requestHeaders[h];
      // Only drop the field when it is not also a real input of the operation.
      if (!isOperationField(op, field)) delete input[field];
    }
    const out = await invokeOperation(op, {
      services,
      requestId: call.requestId,
      transport: 'mcp',
      token: call.token,
      principal: call.principal,
      headers,
      input,
    });
    // Exactly what the HTTP API would serialise.
    const json = JSON.parse(JSON.stringify(out ?? {})) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(json) }], structuredContent: json };
  } catch (err) {
    const appErr = err instanceof AppError ? err : new AppError('internal_error');
    reportUndeclaredError(op, appErr.code, services, 'mcp');
    if (!(err instanceof AppError) && services.config.logLevel !== 'silent') {
      console.error(`[${call.requestId}] MCP tool ${op.mcp?.name} failed:`, err instanceof Error ? err.stack : err);
    }
    return problemToolResult(
      toProblem(appErr, { publicUrl, requestId: call.requestId, instance: instancePath(op, args) }),
      publicUrl,
    );
  }
}

/** The request path the same call has over HTTP (the problem's `instance` there): path parameters filled in. */
function instancePath(op: AnyOperation, args: unknown): string {
  const input = (args ?? {}) as Record<string, unknown>;
  return op.path.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = input[name];
    return typeof v === 'string' && v !== '' ? encodeURIComponent(v) : whole;
  });
}

function isOperationField(op: AnyOperation, field: string): boolean {
  return [op.request.params, op.request.query, op.request.body].some((p) => p && field in (p as z.ZodObject).shape);
}

export function createFlowportMcpServer(call: McpCallContext): McpServer {
  const server = new McpServer(
    { name: 'flowport', title: `${PRODUCT.name} (${PRODUCT.edition})`, version: PRODUCT.version },
    {
      instructions: MCP_SERVER_INSTRUCTIONS,
      // A stateless endpoint with no stream: the tool and resource lists never change under a
      // client, so no listChanged (and no subscriptions) are advertised.
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
    },
  );
  for (const op of mcpOperations(call.operations)) {
    const mcp = op.mcp as NonNullable<AnyOperation['mcp']>;
    server.registerTool(
      mcp.name,
      {
        title: mcp.title,
        description: toolDescription(op),
        inputSchema: advertiseJson(toolInputJsonSchema(op, call.operations)),
        annotations: toolAnnotations(op),
        _meta: {
          'flowport/scope': op.scope,
          'flowport/output_schema': joinUrl(call.services.config.publicUrl, outputSchemaPath(op)),
        },
        scopeChallenge: async ({ request }) => {
          const refusal = await stepUpRefusal(op, request.params?.arguments, call);
          if (!refusal) return undefined;
          call.scopeRefusal = refusal;
          const scopes = (neededScopes(refusal) ?? '').split(' ').filter(Boolean);
          return scopes.length ? { scopes: scopes as [string, ...string[]] } : undefined;
        },
      },
      (args: Record<string, unknown>, ctx: { mcpReq?: { id?: string | number } }) =>
        callOperationTool(op, args, call, ctx?.mcpReq?.id),
    );
  }
  answerRenamedTools(server, call);
  registerResources(server, call.services, mcpOperations(call.operations));
  return server;
}

type ToolsCallHandler = (request: { params: { name: string } }, ctx: unknown) => Promise<unknown>;

/**
 * A tool called by its name before ADR 1000 (`read_manifest`) answers with its name now, as the
 * CLI does for an old command: the `tool_renamed` problem naming `new_name`, instead of the
 * SDK's bare "Tool … not found". Old names are not listed. Every other call goes to the SDK's
 * own tools/call handler unchanged.
 */
function answerRenamedTools(server: McpServer, call: McpCallContext): void {
  const { publicUrl } = call.services.config;
  const renamed = renamedTools();
  const protocol = server.server as unknown as { _getRequestHandler(method: string): ToolsCallHandler | undefined };
  const sdkHandler = protocol._getRequestHandler('tools/call');
  if (!sdkHandler) throw new Error('The MCP SDK registered no tools/call handler.');
  server.server.removeRequestHandler('tools/call');
  server.server.setRequestHandler('tools/call', async (request, ctx) => {
    const now = renamed[request.params.name];
    if (!now) return (await sdkHandler(request, ctx)) as never;
    const error = new AppError('tool_renamed', {
      detail: `The tool \`${request.params.name}\` is now \`${now}\`: call \`${now}\` with the same arguments.`,
      extra: { new_name: now },
    });
    return problemToolResult(
      toProblem(error, { publicUrl, requestId: call.requestId, instance: MCP_PATH }),
      publicUrl,
    ) as never;
  });
}
