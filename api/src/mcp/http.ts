// The MCP endpoint over Streamable HTTP (POST /agent/v1/mcp) and its OAuth
// protected resource metadata (RFC 9728). Serves the 2026-07-28 revision and
// 2025-era clients (stateless legacy) from one factory via the v2 SDK.
//
// Order of checks on every request: Origin (403) → method (405) → grant token
// (401 with a resource_metadata challenge naming the read-only tier) → MCP. With
// an OAuth access token, a tool call the token lacks the scope for answers 403
// insufficient_scope naming it, before the tool runs (MCP step-up, ADR 1430);
// with a grant token, scope refusals come back as `isError` tool results
// carrying the same problem object the HTTP API returns (ADR 0500).
import type { AuthInfo, McpServerFactory } from '@modelcontextprotocol/server';
import { type Context, Hono } from 'hono';
import { issuerOf, PROTECTED_RESOURCE_METADATA_PREFIX, REQUESTABLE_SCOPES, resourcesOf } from '../oauth/metadata.ts';
import type { Config } from '../config.ts';
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { AppError } from '../errors/problem.ts';
import { problemResponse } from '../http/problem-response.ts';
import type { AppEnv } from '../http/types.ts';
import { AGENT_API_PREFIX, MCP_PATH, PRODUCT } from '../lib/package-info.ts';
import { ASK_FOR_A_GRANT } from '../entry-points.ts';
import { authenticateToken } from '../operations/pipeline.ts';
import { recordGrantUse } from '../usage/grant-use.ts';
import type { AnyOperation, Principal, Services } from '../core/types.ts';
import type { McpCallContext } from './server.ts';

export { PROTECTED_RESOURCE_METADATA_PREFIX };

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Browser Origins allowed to call the endpoint: loopback, the public origin, and configured extras. */
/** The `arguments` of each tools/call in a JSON-RPC body (one message or a batch), by id. */
export function toolCallArguments(body: string): Map<string | number, unknown> {
  const out = new Map<string | number, unknown>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return out;
  }
  for (const m of Array.isArray(parsed) ? parsed : [parsed]) {
    const msg = m as { method?: unknown; id?: unknown; params?: { arguments?: unknown } } | null;
    if (msg?.method !== 'tools/call' || (typeof msg.id !== 'string' && typeof msg.id !== 'number')) continue;
    if (msg.params && typeof msg.params === 'object') out.set(msg.id, msg.params.arguments);
  }
  return out;
}

export function isAllowedOrigin(origin: string, config: Config): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname)) return true;
  const allowed = [new URL(config.publicUrl).origin, ...config.mcp.allowedOrigins];
  return allowed.some((a) => a === url.origin);
}

export function protectedResourceMetadata(config: Config) {
  return {
    resource: joinUrl(config.publicUrl, MCP_PATH),
    resource_name: `${PRODUCT.name} MCP endpoint`,
    // Flowport is its own authorization server (ADR 1400): the merchant consents on the merchant
    // page. Grant tokens made on the merchant page (or by the operator CLI) keep working as bearer tokens.
    authorization_servers: [issuerOf(config)],
    bearer_methods_supported: ['header'],
    scopes_supported: [...REQUESTABLE_SCOPES],
    resource_documentation: joinUrl(config.publicUrl, DOCS_PATHS.mcpReference),
    flowport_grant_issuance: `Connect with OAuth (the merchant approves on a consent page), or send \`Authorization: Bearer <GRANT_TOKEN>\`. ${ASK_FOR_A_GRANT}.`,
  };
}

function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1] ?? '';
}

interface FlowportAuthExtra extends Record<string, unknown> {
  call: McpCallContext;
}

export function mcpApp(getServices: () => Services, operations: readonly AnyOperation[]): Hono<AppEnv> {
  // The MCP SDK (with its JSON Schema validator) and the tool definitions load on the first MCP
  // request, not at start: a process that only takes in events never holds them (issue 31 goal 6,
  // ADR 1330).
  let handler: Promise<{ fetch(req: Request, options: { authInfo: AuthInfo }): Promise<Response> }> | undefined;
  const loadHandler = async () => {
    const [{ createMcpHandler }, { createFlowportMcpServer }] = await Promise.all([
      import('@modelcontextprotocol/server'),
      import('./server.ts'),
    ]);
    const factory: McpServerFactory = (ctx) => {
      const extra = ctx.authInfo?.extra as FlowportAuthExtra | undefined;
      if (!extra?.call) throw new Error('MCP request reached the server factory without an authenticated grant.');
      return createFlowportMcpServer(extra.call);
    };
    return createMcpHandler(factory, {
      legacy: 'stateless',
      onerror: (error) => {
        if (getServices().config.logLevel === 'debug') console.error('[mcp]', error.message);
      },
    });
  };

  const app = new Hono<AppEnv>();
  app.all('/', async function mcpEndpoint(c) {
    const services = getServices();
    const { config } = services;
    const origin = c.req.header('origin');
    if (origin !== undefined && !isAllowedOrigin(origin, config)) {
      throw new AppError('origin_not_allowed', {
        detail: `Origin ${origin} may not call the MCP endpoint.`,
        reason: 'Browser origins other than loopback and configured ones are rejected (DNS rebinding protection).',
      });
    }
    if (c.req.method !== 'POST') {
      return problemResponse(
        c,
        new AppError('method_not_allowed', {
          detail: `${c.req.method} is not allowed on ${MCP_PATH}: this endpoint is stateless Streamable HTTP (no SSE stream, no sessions). Send JSON-RPC messages with POST.`,
          allow: ['POST'],
        }),
        config.publicUrl,
      );
    }
    const token = bearerToken(c.req.header('authorization'));
    const requestId = c.get('requestId');
    let principal: Principal;
    try {
      // The grant's use is a tool call's, counted once with its admission (or below): the protocol's
      // own messages (initialize, notifications, tools/list) are not calls and leave use_count alone.
      principal = await authenticateToken(token, services, requestId, { deferUse: true });
      // An OAuth access token names the resource it was issued for (RFC 8707).
      if (principal.resource !== undefined && principal.resource !== resourcesOf(config).mcp)
        throw new AppError('token_audience_mismatch', {
          reason: `This access token was issued for ${principal.resource}, not this MCP endpoint.`,
        });
    } catch (err) {
      if (err instanceof AppError && err.status === 401) return problemResponse(c, err, config.publicUrl, MCP_PATH);
      throw err;
    }
    c.set('principal', principal);
    const requestHeaders: Record<string, string | undefined> = {};
    c.req.raw.headers.forEach((v, k) => {
      if (k !== 'authorization' && k !== 'cookie') requestHeaders[k] = v;
    });
    const rawArguments = toolCallArguments(await c.req.raw.clone().text());
    const call: McpCallContext = { services, operations, requestId, token, principal, requestHeaders, rawArguments };
    const authInfo: AuthInfo = {
      token: token ?? '',
      clientId: principal.grantId,
      scopes: [...principal.scopes],
      expiresAt: Math.floor(principal.expiresAt / 1000),
      extra: { call } satisfies FlowportAuthExtra,
    };
    handler ??= loadHandler().catch((err: unknown) => {
      handler = undefined;
      throw err;
    });
    const res = await (await handler).fetch(c.req.raw, { authInfo });
    // A tool call nothing wrote for (a public tool, arguments refused before admission): counted here.
    if (rawArguments.size > 0) recordGrantUse(services.db, principal, services.now());
    // A tool call this OAuth token lacks the scope for was answered with a scope challenge before
    // anything ran: answered here as the problem the HTTP API gives, challenge and all (step-up).
    if (call.scopeRefusal) {
      await res.body?.cancel();
      return problemResponse(c, call.scopeRefusal, config.publicUrl, MCP_PATH);
    }
    return res;
  });
  return app;
}

/** The Agent Operations API as a protected resource (RFC 9728), for tokens bound to it. */
export function apiProtectedResourceMetadata(config: Config) {
  return {
    ...protectedResourceMetadata(config),
    resource: resourcesOf(config).api,
    resource_name: `${PRODUCT.name} Agent Operations API`,
    resource_documentation: joinUrl(config.publicUrl, DOCS_PATHS.apiReference),
  };
}

/** Mounted at /.well-known/oauth-protected-resource: the path-suffixed documents and the root fallback. */
export function protectedResourceMetadataApp(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const serve = (c: Context<AppEnv>) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(protectedResourceMetadata(getServices().config));
  };
  app.get(MCP_PATH, serve);
  app.get('/', serve);
  app.get(AGENT_API_PREFIX, (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(apiProtectedResourceMetadata(getServices().config));
  });
  return app;
}
