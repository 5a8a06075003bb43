// The one body limit and input guard of every route (issue 40, ADR 1102). createApp installs it
// before anything is routed, so a route added anywhere in the app is behind it:
// - the body limit of the request's path, from BODY_LIMITS (one table, intake's included): a
//   declared Content-Length over it is refused 413 before a byte is read, a chunked body is cut at
//   it (hono/body-limit); a 413 closes the connection, so the rest is never read either;
// - a NUL or another control character in the path or the query string, a NUL anywhere in a JSON
//   body (keys too), a control character in a form field: 400 `invalid_characters`, before
//   authentication and before any store sees it (lib/control-chars.ts holds the rule);
// - a multipart body that does not parse (a broken part, no boundary, cut short): 400
//   `invalid_request` (http/form.ts), whatever the route, before authentication.
// JSON is parsed with JSON.parse, which keeps `__proto__` and `constructor` as plain own keys; the
// code reading a body looks fields up as own properties (operations/closed-input.ts).
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { OAUTH_PATHS } from '../oauth/metadata.ts';
import type { Config } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { parseFormData } from './form.ts';
import { refuseControlCharacters } from '../lib/control-chars.ts';
import { AGENT_API_PREFIX, COMPLIANCE_WEBHOOK_PATH, INGEST_PATH_PREFIX, MCP_PATH } from '../lib/package-info.ts';
import { SANDBOX_MOUNT_PATH, SHOPIFY_APP_PATHS } from '../lib/shopify-app.ts';
import type { AppEnv } from './types.ts';

/**
 * What the guard does with a body within the limit:
 * - `checked`: read, and its JSON or form fields checked (NUL anywhere in JSON, any control
 *   character in a form field); the route reads the same bytes afterwards;
 * - `rpc`: as `checked`, but a JSON-RPC call's tool `arguments` are left to the operation pipeline,
 *   which answers a NUL there as a tool error the agent can read (MCP);
 * - `raw`: not parsed: the route verifies a signature over the exact bytes and checks the fields
 *   it reads itself (intake: intake/mapping.ts; Shopify webhooks).
 */
export type BodyHandling = 'checked' | 'rpc' | 'raw';

export interface BodyLimit {
  /** A path, matched as itself or as a prefix followed by `/`. */
  path: string;
  maxBytes: number;
  body: BodyHandling;
  /**
   * `guard`: this middleware enforces the limit. `intake`: intake's fast path (node-intake.ts) and
   * its Hono route read with this same limit themselves, before reading a byte over it, and write
   * the sender a receipt for the 413; the guard leaves their bodies alone.
   */
  enforcedBy: 'guard' | 'intake';
  /** What is behind the path, for the 413's detail. */
  about: string;
}

/** The largest request body an Agent Operations call (or an MCP message) takes; a test event payload must fit Flow's 50 kB. */
export const AGENT_API_MAX_BODY_BYTES = 1_048_576;
/** Forms and small JSON documents (OAuth client registration, token, revocation, consent). */
const FORM_MAX_BYTES = 16 * 1024;

/** The body limit of every route, most specific first; the last entry covers everything else. */
export function bodyLimits(config: Pick<Config, 'intake'>): readonly BodyLimit[] {
  const intake = config.intake.maxBodyBytes;
  return [
    { path: INGEST_PATH_PREFIX, maxBytes: intake, body: 'raw', enforcedBy: 'intake', about: 'Sender intake' },
    { path: COMPLIANCE_WEBHOOK_PATH, maxBytes: intake, body: 'raw', enforcedBy: 'guard', about: 'Shopify webhooks' },
    {
      path: SHOPIFY_APP_PATHS.appUninstalledWebhook,
      maxBytes: 256 * 1024,
      body: 'raw',
      enforcedBy: 'guard',
      about: 'Shopify webhooks',
    },
    {
      path: SHOPIFY_APP_PATHS.flowLifecycle,
      maxBytes: 16 * 1024,
      body: 'raw',
      enforcedBy: 'guard',
      about: 'Shopify Flow lifecycle signals',
    },
    { path: MCP_PATH, maxBytes: AGENT_API_MAX_BODY_BYTES, body: 'rpc', enforcedBy: 'guard', about: 'MCP messages' },
    {
      path: AGENT_API_PREFIX,
      maxBytes: AGENT_API_MAX_BODY_BYTES,
      body: 'checked',
      enforcedBy: 'guard',
      about: 'Agent Operations request bodies',
    },
    ...[OAUTH_PATHS.register, OAUTH_PATHS.token, OAUTH_PATHS.revoke, OAUTH_PATHS.authorize].map(
      (path): BodyLimit => ({
        path,
        maxBytes: FORM_MAX_BYTES,
        body: 'checked',
        enforcedBy: 'guard',
        about: 'OAuth requests',
      }),
    ),
    {
      path: SHOPIFY_APP_PATHS.merchant,
      maxBytes: FORM_MAX_BYTES,
      body: 'checked',
      enforcedBy: 'guard',
      about: 'Merchant page forms',
    },
    {
      path: SANDBOX_MOUNT_PATH,
      maxBytes: AGENT_API_MAX_BODY_BYTES,
      body: 'checked',
      enforcedBy: 'guard',
      about: "The sandbox's Shopify stand-in",
    },
    { path: '/', maxBytes: FORM_MAX_BYTES, body: 'checked', enforcedBy: 'guard', about: 'Request bodies here' },
  ];
}

/** The limit of the route at `path` (the table's first entry that covers it). */
export function bodyLimitFor(path: string, config: Pick<Config, 'intake'>): BodyLimit {
  const rules = bodyLimits(config);
  const hit = rules.find((r) => r.path === '/' || path === r.path || path.startsWith(`${r.path}/`));
  return hit ?? (rules[rules.length - 1] as BodyLimit);
}

function tooLarge(c: Context<AppEnv>, rule: BodyLimit, declared?: number): never {
  // The rest of the body is not read: the connection closes after the answer.
  c.header('Connection', 'close');
  throw new AppError('payload_too_large', {
    detail:
      declared === undefined
        ? `${rule.about} are limited to ${rule.maxBytes} bytes.`
        : `The declared body (${declared} bytes) is larger than the limit of ${rule.maxBytes} bytes for ${rule.about.toLowerCase()}; it was not read.`,
  });
}

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The path and query string: no control character at all (ids, names, filters, OAuth parameters). */
function checkUrl(c: Context<AppEnv>): void {
  const url = new URL(c.req.url);
  const query: [string, string][] = [...new URLSearchParams(url.search)];
  refuseControlCharacters({
    path: decoded(url.pathname),
    ...(query.length ? { query: query.map(([k, v]) => ({ [k]: v })) } : {}),
  });
}

/** A JSON-RPC message (or batch) without its tool arguments, which the operation pipeline checks. */
function withoutToolArguments(message: unknown): unknown {
  if (Array.isArray(message)) return message.map(withoutToolArguments);
  if (!message || typeof message !== 'object') return message;
  const params = (message as { params?: unknown }).params;
  if (!params || typeof params !== 'object' || Array.isArray(params)) return message;
  const { arguments: _args, ...rest } = params as Record<string, unknown>;
  return { ...(message as Record<string, unknown>), params: rest };
}

async function checkBody(bytes: ArrayBuffer, type: string, handling: BodyHandling): Promise<void> {
  // A multipart type with no body still has to parse (no boundary, no closing delimiter: refused).
  if (bytes.byteLength === 0 && !/multipart\/form-data/i.test(type)) return;
  if (/json/i.test(type)) {
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return; // Not JSON: the route answers that (invalid_json or its protocol's error).
    }
    if (handling === 'rpc') value = withoutToolArguments(value);
    refuseControlCharacters({ body: value }, {}, { nulOnly: true });
    return;
  }
  if (/application\/x-www-form-urlencoded/i.test(type)) {
    const fields = [...new URLSearchParams(new TextDecoder().decode(bytes))];
    refuseControlCharacters({ form: fields.map(([k, v]) => ({ [k]: v })) });
    return;
  }
  if (/multipart\/form-data/i.test(type)) {
    const form = await parseFormData(bytes, type);
    const fields = [...form.entries()].map(([k, v]) => ({ [k]: typeof v === 'string' ? v : v.name }));
    refuseControlCharacters({ form: fields });
  }
}

/** The middleware: createApp installs it first, for every path. */
export function inputGuard(config: Pick<Config, 'intake'>): MiddlewareHandler<AppEnv> {
  const limited = new Map<BodyLimit['path'], MiddlewareHandler<AppEnv>>();
  const streamLimit = (rule: BodyLimit) => {
    let mw = limited.get(rule.path);
    if (!mw) {
      mw = bodyLimit({ maxSize: rule.maxBytes, onError: (c) => tooLarge(c as Context<AppEnv>, rule) });
      limited.set(rule.path, mw);
    }
    return mw;
  };
  return async function inputGuardMiddleware(c, next) {
    checkUrl(c);
    const rule = bodyLimitFor(c.req.path, config);
    if (rule.enforcedBy !== 'guard') return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > rule.maxBytes) tooLarge(c, rule, Number(declared));
    if (!c.req.raw.body) return next();
    return streamLimit(rule)(c, async () => {
      if (rule.body !== 'raw') {
        const bytes = await c.req.raw.arrayBuffer();
        await checkBody(bytes, c.req.header('content-type') ?? '', rule.body);
        // The route reads the same bytes.
        c.req.raw = new Request(c.req.raw, { body: bytes });
      }
      await next();
    });
  };
}
