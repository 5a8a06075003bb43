// Shopify Admin GraphQL client for flowTriggerReceive. The access token is
// decrypted by the caller, held only in memory for the call, and never logged,
// stored or echoed: the response summary keeps userErrors and throttle facts only.

export const FLOW_TRIGGER_MUTATION =
  'mutation flowTriggerReceive($handle: String, $payload: JSON) { flowTriggerReceive(handle: $handle, payload: $payload) { userErrors { field message } } }';

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

export interface FlowCallResult {
  httpStatus: number | null;
  /** The response had `data.flowTriggerReceive` (a GraphQL answer, not an error page). */
  hasData: boolean;
  userErrors: { field: string[]; message: string }[];
  /** The `extensions.code` of each top-level GraphQL error (e.g. THROTTLED, ACCESS_DENIED). */
  errorCodes: string[];
  throttled: boolean;
  throttleStatus: ThrottleStatus | null;
  /** How long Shopify asks us to wait (Retry-After or the throttle bucket), 0 when it does not say. */
  throttleWaitMs: number;
  retryAfterMs: number;
  /** Network-level failure: 'timeout' or 'connection_error'. */
  transportError: 'timeout' | 'connection_error' | null;
  /**
   * A network failure after the request may have reached Shopify (a timeout, or a connection
   * that broke once open): Flow may have accepted the trigger. False when it cannot have
   * (refused, DNS, TLS) and when Shopify answered.
   */
  mayHaveReachedShopify: boolean;
  durationMs: number;
  /** Redacted summary safe to store on the attempt (no tokens, no payload). */
  summary: FlowResponseSummary;
}

export interface FlowResponseSummary {
  http_status: number | null;
  user_errors?: { field: string[]; message: string }[];
  errors?: string[];
  throttle_status?: ThrottleStatus;
  transport_error?: string;
  /** What the other fields do not say: why an unanswered call may have reached Flow, a redirect not followed, a body that was not JSON (never a secret or the payload). */
  note?: string;
}

/**
 * Error codes of a connection that was open and broke: the request (or part of it) may have
 * been read and acted on. Anything else (refused, DNS, TLS, connect timeout) failed before
 * Shopify could see the call.
 */
const BROKE_WHEN_OPEN = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** Ends the note of every attempt that may have reached Flow without an answer saying so. */
export const MAY_HAVE_REACHED_FLOW_NOTE = 'Shopify may have accepted the trigger';

export function graphqlUrl(adminBaseUrl: string, apiVersion: string): string {
  return `${adminBaseUrl.replace(/\/+$/, '')}/admin/api/${apiVersion}/graphql.json`;
}

function parseRetryAfter(value: string | null): number {
  if (!value) return 0;
  const s = Number(value);
  if (Number.isFinite(s) && s >= 0) return Math.min(s * 1000, 3_600_000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, Math.min(at - Date.now(), 3_600_000));
}

/** Time until the leaky bucket holds `cost` points again. */
export function throttleWaitFrom(status: ThrottleStatus | null, cost = 1): number {
  if (!status || status.restoreRate <= 0) return 0;
  const missing = cost - status.currentlyAvailable;
  return missing > 0 ? Math.ceil((missing / status.restoreRate) * 1000) : 0;
}

function asString(v: unknown, max = 500): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

export async function callFlowTriggerReceive(args: {
  url: string;
  accessToken: string;
  handle: string;
  payload: unknown;
  timeoutMs: number;
}): Promise<FlowCallResult> {
  const started = performance.now();
  let res: Response;
  let text: string;
  try {
    res = await fetch(args.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-shopify-access-token': args.accessToken,
      },
      body: JSON.stringify({ query: FLOW_TRIGGER_MUTATION, variables: { handle: args.handle, payload: args.payload } }),
      signal: AbortSignal.timeout(args.timeoutMs),
      // Never follow a redirect: it would re-send the access token and the payload to wherever
      // the Location points (custom headers survive cross-origin redirects). A 3xx is an
      // unexpected answer like any other, recorded and retried.
      redirect: 'manual',
    });
    text = await res.text();
  } catch (err) {
    return transportFailure(err, started);
  }
  return readAnswer(res, text, started);
}

/** The result of a call that got no HTTP answer (a timeout, a refused or broken connection). */
function transportFailure(err: unknown, started: number): FlowCallResult {
  const name = err instanceof Error ? err.name : 'Error';
  const transportError = name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'connection_error';
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  const mayHaveReachedShopify =
    transportError === 'timeout' || (typeof cause?.code === 'string' && BROKE_WHEN_OPEN.has(cause.code));
  const summary: FlowResponseSummary = { http_status: null, transport_error: transportError };
  if (mayHaveReachedShopify)
    summary.note =
      transportError === 'timeout'
        ? `no answer in time; ${MAY_HAVE_REACHED_FLOW_NOTE}`
        : `the connection broke after it was open; ${MAY_HAVE_REACHED_FLOW_NOTE}`;
  return {
    hasData: false,
    userErrors: [],
    errorCodes: [],
    throttled: false,
    throttleStatus: null,
    throttleWaitMs: 0,
    retryAfterMs: 0,
    httpStatus: null,
    transportError,
    mayHaveReachedShopify,
    durationMs: performance.now() - started,
    summary,
  };
}

/** The result of a call Shopify answered, read from its status, headers and body. */
function readAnswer(res: Response, text: string, started: number): FlowCallResult {
  let body: unknown = null;
  let unreadable = false;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
    unreadable = true;
  }
  const b = (body ?? {}) as {
    data?: { flowTriggerReceive?: { userErrors?: FlowCallResult['userErrors'] } } | null;
    errors?: unknown;
    extensions?: { cost?: { throttleStatus?: ThrottleStatus } };
  };
  const errorList = Array.isArray(b.errors)
    ? (b.errors as { message?: unknown; extensions?: { code?: string } }[])
    : [];
  const errorCodes = errorList.flatMap((e) => (typeof e.extensions?.code === 'string' ? [e.extensions.code] : []));
  const throttled = res.status === 429 || errorCodes.includes('THROTTLED');
  const throttleStatus = b.extensions?.cost?.throttleStatus ?? null;
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
  const userErrors = b.data?.flowTriggerReceive?.userErrors ?? [];
  const summary: FlowResponseSummary = { http_status: res.status };
  if (userErrors.length)
    summary.user_errors = userErrors.map((e) => ({ field: e.field, message: asString(e.message) }));
  if (errorList.length) summary.errors = errorList.map((e) => asString(e.message ?? e));
  // 401 bodies carry `errors` as a string; keep it (it names no secret).
  else if (typeof b.errors === 'string') summary.errors = [asString(b.errors)];
  if (throttleStatus) summary.throttle_status = throttleStatus;
  if (res.status >= 300 && res.status < 400)
    summary.note =
      'Shopify answered with a redirect; not followed (the access token goes only to the configured Admin API URL)';
  else if (unreadable)
    // Say what came back (a proxy's HTML error page, an empty body), never the body itself.
    summary.note = `the response was not JSON (${text.length} characters, content-type ${asString(res.headers.get('content-type') ?? 'none', 100)})`;
  return {
    httpStatus: res.status,
    hasData: Boolean(b.data?.flowTriggerReceive),
    userErrors,
    errorCodes,
    throttled,
    throttleStatus,
    throttleWaitMs: Math.max(retryAfterMs, throttled ? throttleWaitFrom(throttleStatus) : 0),
    retryAfterMs,
    transportError: null,
    mayHaveReachedShopify: false,
    durationMs: performance.now() - started,
    summary,
  };
}
