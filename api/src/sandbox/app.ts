// The Shopify Admin GraphQL stand-in used in sandbox mode and in tests.
// Implements flowTriggerReceive as Shopify does (REFERENCE-FACTS.md): exact
// userErrors, the 401 body, THROTTLED as HTTP 200 or 429, a leaky bucket per
// shop with extensions.cost.throttleStatus on every GraphQL answer. It validates
// payloads against the repo's trigger definitions, keeps a record of received
// triggers, and injects faults per shop on request. Mounted in-process at
// /sandbox/shopify, or run alone (./server.ts, `flowport sandbox --port N`).
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type Context, Hono } from 'hono';
import type { BlankEnv } from 'hono/types';
import { FLOW_PAYLOAD_LIMIT_BYTES } from '../handoff/payload.ts';
import { loadTriggerDefinitions, type TriggerDefinition } from '../handoff/triggers.ts';
import { type LoopbackRefusal, loopbackRefusal } from '../lib/loopback-guard.ts';
import {
  createInstallState,
  installRoutes,
  type SandboxInstallState,
  type SandboxShopifyApp,
  tokenHash,
} from './install.ts';

export { FLOW_PAYLOAD_LIMIT_BYTES };

export { SANDBOX_MOUNT_PATH } from '../lib/shopify-app.ts';

export const SANDBOX_MESSAGES = {
  invalidToken: '[API] Invalid API key or access token (unrecognized login or wrong password)',
  argsRequired: '`handle` and `payload` arguments are required',
  tooLarge: 'Errors validating schema:\n  Properties size exceeds the limit of 50000 bytes.\n',
  invalidHandle: (handle: string) => `Errors validating schema:\n  Invalid handle '${handle}'.\n`,
  // Shopify's wording for field-level schema errors is unverified; these follow the same format.
  missingProperty: (key: string) => `Errors validating schema:\n  Missing required property '${key}'.\n`,
  invalidType: (key: string, type: string) => `Errors validating schema:\n  Property '${key}' must be a ${type}.\n`,
  unknownProperty: (key: string) => `Errors validating schema:\n  Unknown property '${key}'.\n`,
  throttled: 'Throttled',
  internal: 'Internal error. Looks like something went wrong on our end.',
  // Shopify's exact bodies for a store it refuses (402 frozen, 423 locked, 403 app access denied,
  // 404 store not found) are unverified; stand-ins. Flowport reads only the status.
  frozen: 'Unavailable Shop',
  locked: 'Locked',
  accessDenied: 'Forbidden',
  // The GraphQL form of a denied app (HTTP 200, no data, code ACCESS_DENIED); wording unverified.
  accessDeniedGraphql: 'Access denied for flowTriggerReceive field.',
  notFound: 'Not Found',
} as const;

export const FAULT_MODES = [
  'none',
  'http_500',
  'http_502',
  'http_503',
  'throttled_200',
  'throttled_429',
  'timeout',
  'reset',
  'revoked',
  'frozen',
  'locked',
  'access_denied',
  'access_denied_graphql',
  'not_found',
] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** A fault rule for one shop (or '*' for every shop). */
export interface FaultSpec {
  mode: FaultMode;
  /** Share of calls that fail, 0–1 (default 1: every call). */
  rate?: number;
  /** Fail only the next N matching calls, then clear (default: until cleared). */
  count?: number;
  /** Added to every call for this shop, faulted or not. */
  latency_ms?: number;
  /** Retry-After seconds on throttled_429 (default 1). */
  retry_after_s?: number;
  /** How long a `timeout` call hangs before the sandbox gives up (default 60 s; the client times out first). */
  hang_ms?: number;
}

export interface ReceivedTrigger {
  seq: number;
  shop: string;
  handle: string;
  apiVersion: string;
  payload: Record<string, unknown>;
  /** Wall-clock ms with sub-ms precision (performance.timeOrigin + now()). */
  receivedAt: number;
  /** First 12 hex chars of the token's SHA-256 (to check which token was sent, never the token). */
  tokenSha256: string;
}

export interface SandboxOptions {
  definitions?: TriggerDefinition[];
  /** Leaky bucket per shop (Shopify's standard: 2000 points, 100/s). */
  bucket?: { maximumAvailable: number; restoreRate: number };
  /** Received triggers kept in memory (oldest dropped first; default RECORDED_TRIGGERS). */
  maxRecorded?: number;
}

/** A leaky bucket's size and restore rate (points per second). */
export interface BucketSpec {
  maximumAvailable: number;
  restoreRate: number;
}

/**
 * Shopify's GraphQL Admin API buckets by plan: restore rates from shopify.dev's rate-limit page
 * (Standard 100 points/s, Advanced 200, Plus 1,000); sizes are 20 s of restore, as the Standard
 * bucket's 2,000 (Shopify's examples); the Advanced and Plus sizes are not stated there (unverified).
 */
export const SHOPIFY_BUCKETS = {
  standard: { maximumAvailable: 2_000, restoreRate: 100 },
  advanced: { maximumAvailable: 4_000, restoreRate: 200 },
  plus: { maximumAvailable: 20_000, restoreRate: 1_000 },
} as const satisfies Record<string, BucketSpec>;

/**
 * How many received triggers the stand-in keeps by default. Each holds its payload (about 1.3 KB
 * of heap for a 1 KiB event), and the stand-in mounted in Flowport shares Flowport's memory: 5,000
 * keep the record under 10 MB however long Flowport runs (issue 31 goal 6, ADR 1330). The stand-in
 * on its own port (`flowport sandbox --port`) is told to keep more (server.ts).
 */
export const RECORDED_TRIGGERS = 5_000;

export interface SandboxState {
  definitions: Map<string, TriggerDefinition>;
  triggers: ReceivedTrigger[];
  /** Every flowTriggerReceive call per shop, including refused and faulted ones. */
  calls: Map<string, number>;
  faults: Map<string, FaultSpec>;
  buckets: Map<string, { available: number; at: number }>;
  /** The default bucket (Shopify's Standard plan unless configured). */
  bucket: BucketSpec;
  /** Buckets set per shop (`POST /_buckets/<shop>`), e.g. a Plus-sized one. */
  shopBuckets: Map<string, BucketSpec>;
  /** THROTTLED answers per shop because its bucket was empty (faults not counted). */
  throttled: Map<string, number>;
  maxRecorded: number;
  seq: number;
  listeners: Set<(t: ReceivedTrigger) => void>;
  /** Kept for callers that only need the handle list. */
  knownHandles: Set<string>;
  /** The install side: OAuth codes, issued and revoked tokens, sandbox workflows (./install.ts). */
  install: SandboxInstallState;
}

export function createSandboxState(options: SandboxOptions | Iterable<string> = {}): SandboxState {
  const opts: SandboxOptions = Symbol.iterator in Object(options) ? {} : (options as SandboxOptions);
  const defs = opts.definitions ?? loadTriggerDefinitions();
  return {
    definitions: new Map(defs.map((d) => [d.handle, d])),
    triggers: [],
    calls: new Map(),
    faults: new Map(),
    buckets: new Map(),
    bucket: opts.bucket ?? { ...SHOPIFY_BUCKETS.standard },
    shopBuckets: new Map(),
    throttled: new Map(),
    maxRecorded: opts.maxRecorded ?? RECORDED_TRIGGERS,
    seq: 0,
    listeners: new Set(),
    knownHandles: new Set(defs.map((d) => d.handle)),
    install: createInstallState(),
  };
}

export function setFault(state: SandboxState, shop: string, spec: FaultSpec): void {
  if (spec.mode === 'none' && !spec.latency_ms) state.faults.delete(shop);
  else state.faults.set(shop, { ...spec });
}

export function clearFaults(state: SandboxState): void {
  state.faults.clear();
}

export function triggersFor(state: SandboxState, shop?: string): ReceivedTrigger[] {
  return shop ? state.triggers.filter((t) => t.shop === shop) : state.triggers;
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Sets a shop's bucket (size, restore rate) and, optionally, how full it is now. */
export function setBucket(state: SandboxState, shop: string, spec: BucketSpec & { currentlyAvailable?: number }): void {
  state.shopBuckets.set(shop, { maximumAvailable: spec.maximumAvailable, restoreRate: spec.restoreRate });
  state.buckets.set(shop, {
    available: Math.min(spec.maximumAvailable, spec.currentlyAvailable ?? spec.maximumAvailable),
    at: nowMs(),
  });
}

function bucketOf(state: SandboxState, shop: string): BucketSpec {
  return state.shopBuckets.get(shop) ?? state.bucket;
}

/** Takes one point from the shop's bucket; returns the status after the call (or null when empty). */
function spend(state: SandboxState, shop: string): { status: ThrottleStatusOut; ok: boolean } {
  const t = nowMs();
  const spec = bucketOf(state, shop);
  const b = state.buckets.get(shop) ?? { available: spec.maximumAvailable, at: t };
  b.available = Math.min(spec.maximumAvailable, b.available + ((t - b.at) / 1000) * spec.restoreRate);
  b.at = t;
  const ok = b.available >= 1;
  if (ok) b.available -= 1;
  else state.throttled.set(shop, (state.throttled.get(shop) ?? 0) + 1);
  state.buckets.set(shop, b);
  return { ok, status: throttleStatus(spec, Math.floor(b.available)) };
}

interface ThrottleStatusOut {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

function throttleStatus(bucket: BucketSpec, available: number): ThrottleStatusOut {
  return {
    maximumAvailable: bucket.maximumAvailable,
    currentlyAvailable: available,
    restoreRate: bucket.restoreRate,
  };
}

function costExtensions(status: ThrottleStatusOut, actual: number | null) {
  return { cost: { requestedQueryCost: 1, actualQueryCost: actual, throttleStatus: status } };
}

/** Validates a payload against the trigger's fields; returns the first user error or null. */
export function validatePayload(
  def: TriggerDefinition,
  payload: Record<string, unknown>,
): { field: string[]; message: string } | null {
  const known = new Set(def.fields.map((f) => f.payloadKey));
  for (const f of def.fields) {
    const v = payload[f.payloadKey];
    if (v === undefined || v === null)
      return { field: ['body'], message: SANDBOX_MESSAGES.missingProperty(f.payloadKey) };
    const ok =
      f.reference || f.type === 'number_decimal'
        ? typeof v === 'number' && Number.isFinite(v)
        : f.type === 'boolean'
          ? typeof v === 'boolean'
          : typeof v === 'string';
    if (!ok)
      return { field: ['body'], message: SANDBOX_MESSAGES.invalidType(f.payloadKey, f.reference ? 'number' : f.type) };
  }
  for (const key of Object.keys(payload)) {
    if (!known.has(key)) return { field: ['body'], message: SANDBOX_MESSAGES.unknownProperty(key) };
  }
  return null;
}

function pickFault(state: SandboxState, shop: string): { spec: FaultSpec | null; fire: boolean } {
  const spec = state.faults.get(shop) ?? state.faults.get('*') ?? null;
  if (!spec || spec.mode === 'none') return { spec, fire: false };
  const fire = Math.random() < (spec.rate ?? 1);
  if (fire && spec.count !== undefined) {
    spec.count -= 1;
    if (spec.count <= 0) state.faults.delete(state.faults.has(shop) ? shop : '*');
  }
  return { spec, fire };
}

/**
 * Waits `ms`, or less if the client goes away first (its timeout). The client's going away is
 * seen on the socket (the Request signal is not reliable here). The listener is removed
 * afterwards: a keep-alive socket serves many calls and must not collect one per call.
 */
function sleepWhileConnected(ms: number, incoming: IncomingMessage | undefined): Promise<void> {
  const socket = incoming?.socket;
  if (socket?.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      socket?.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    socket?.once('close', done);
  });
}

export interface SandboxAppOptions {
  /**
   * Refuse requests the loopback guard turns down (../http/loopback-guard.ts) with this hook's
   * error or response. Set for the stand-in mounted in a Flowport server and for the standalone
   * `flowport sandbox`.
   */
  refuseRemote?: (refusal: { reason: LoopbackRefusal; detail: string }) => Error | Response;
  /** The Shopify app the stand-in installs (authorize page, tokens, webhooks); absent: no install side. */
  shopifyApp?: () => SandboxShopifyApp | null;
}

export function sandboxApp(state: SandboxState, options: SandboxAppOptions = {}): Hono {
  const app = new Hono();
  const refuse = options.refuseRemote;
  if (refuse) {
    app.use('*', async (c, next) => {
      const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
      // The authorize page's Install and Decline buttons are a plain HTML form (as Shopify's are).
      const forms =
        c.req.path.endsWith('/admin/oauth/authorize') || c.req.path.endsWith('/admin/apps/flowport/install');
      const refusal = loopbackRefusal(incoming, c.req.raw.headers, c.req.method, { forms });
      if (refusal) {
        const answer = refuse(refusal);
        if (answer instanceof Response) return answer;
        throw answer;
      }
      await next();
    });
  }

  if (options.shopifyApp) installRoutes(app, state, state.install, options.shopifyApp);

  controlRoutes(app, state);

  app.post(GRAPHQL_PATH, (c) => answerGraphql(c, state));
  return app;
}

/** The sandbox's own controls: the record of received triggers, each shop's bucket, fault injection. */
function controlRoutes(app: Hono, state: SandboxState): void {
  // The record of received triggers (sandbox mode only; documented URL).
  app.get('/triggers', (c) => {
    const shop = c.req.query('shop');
    const since = Number(c.req.query('since_seq') ?? 0);
    const list = triggersFor(state, shop).filter((t) => t.seq > since);
    return c.json({
      triggers: list,
      calls: Object.fromEntries(state.calls),
      throttled: Object.fromEntries(state.throttled),
    });
  });
  app.delete('/triggers', (c) => {
    state.triggers.length = 0;
    state.calls.clear();
    state.throttled.clear();
    return c.body(null, 204);
  });

  // A shop's leaky bucket: POST /_buckets/<shop> with {maximumAvailable, restoreRate,
  // currentlyAvailable?} or {plan: standard|advanced|plus}; DELETE puts back the default.
  app.get('/_buckets', (c) =>
    c.json({ default: state.bucket, buckets: Object.fromEntries(state.shopBuckets), plans: SHOPIFY_BUCKETS }),
  );
  app.post('/_buckets/:shop', async (c) => {
    const body = (await c.req.json().catch(() => null)) as
      | (Partial<BucketSpec> & { currentlyAvailable?: number; plan?: string })
      | null;
    const plan = body?.plan ? SHOPIFY_BUCKETS[body.plan as keyof typeof SHOPIFY_BUCKETS] : undefined;
    const spec = { ...plan, ...body };
    const positive = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n > 0;
    if (!body || (body.plan && !plan) || !positive(spec.maximumAvailable) || !positive(spec.restoreRate))
      return c.json(
        {
          error: `Body must be JSON: {"maximumAvailable": n, "restoreRate": n, "currentlyAvailable"?: n} or {"plan": "${Object.keys(SHOPIFY_BUCKETS).join('|')}"}`,
        },
        400,
      );
    setBucket(state, c.req.param('shop'), spec as BucketSpec & { currentlyAvailable?: number });
    return c.json({ shop: c.req.param('shop'), bucket: state.shopBuckets.get(c.req.param('shop')) });
  });
  app.delete('/_buckets/:shop', (c) => {
    state.shopBuckets.delete(c.req.param('shop'));
    state.buckets.delete(c.req.param('shop'));
    return c.body(null, 204);
  });

  // Fault injection control: POST /_faults/<shop domain or *> with a FaultSpec; DELETE clears.
  app.get('/_faults', (c) => c.json({ faults: Object.fromEntries(state.faults), modes: FAULT_MODES }));
  app.post('/_faults/:shop', async (c) => {
    let spec: FaultSpec;
    try {
      spec = (await c.req.json()) as FaultSpec;
    } catch {
      return c.json(
        { error: 'Body must be JSON: {"mode": "<mode>", "rate"?: 0..1, "count"?: n, "latency_ms"?: n}' },
        400,
      );
    }
    if (!(FAULT_MODES as readonly string[]).includes(spec.mode)) {
      return c.json({ error: `mode must be one of ${FAULT_MODES.join(', ')}` }, 400);
    }
    if (spec.rate !== undefined && !(spec.rate >= 0 && spec.rate <= 1))
      return c.json({ error: 'rate must be between 0 and 1' }, 400);
    setFault(state, c.req.param('shop'), spec);
    return c.json({ shop: c.req.param('shop'), fault: state.faults.get(c.req.param('shop')) ?? null });
  });
  app.delete('/_faults/:shop', (c) => {
    const shop = c.req.param('shop');
    if (shop === '*') clearFaults(state);
    else state.faults.delete(shop);
    return c.body(null, 204);
  });
}

const GRAPHQL_PATH = '/:shop/admin/api/:version/graphql.json';
type GraphqlContext = Context<BlankEnv, typeof GRAPHQL_PATH>;

/** Shopify's Admin GraphQL endpoint as far as Flow is concerned: flowTriggerReceive, its bucket, the faults set for the shop. */
async function answerGraphql(c: GraphqlContext, state: SandboxState): Promise<Response> {
  const shop = c.req.param('shop');
  state.calls.set(shop, (state.calls.get(shop) ?? 0) + 1);
  const { spec, fire } = pickFault(state, shop);
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (spec?.latency_ms) await sleepWhileConnected(spec.latency_ms, incoming);

  if (fire && spec) {
    const injected = await injectedFault(c, state, shop, spec, incoming);
    if (injected) return injected;
  }

  const token = c.req.header('x-shopify-access-token');
  if (!token || state.install.revokedTokens.has(tokenHash(token)))
    return c.json({ errors: SANDBOX_MESSAGES.invalidToken }, 401);

  const spent = spend(state, shop);
  if (!spent.ok) {
    return c.json({
      errors: [
        {
          message: SANDBOX_MESSAGES.throttled,
          extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
        },
      ],
      extensions: costExtensions(spent.status, null),
    });
  }
  let body: { query?: string; variables?: { handle?: unknown; payload?: unknown } };
  try {
    body = await c.req.json();
  } catch {
    return c.json({ errors: [{ message: 'Parse error', extensions: { code: 'BAD_REQUEST' } }] }, 400);
  }
  if (!body.query || !/flowTriggerReceive/.test(body.query)) {
    return c.json(
      {
        errors: [{ message: 'The sandbox implements only flowTriggerReceive.' }],
        extensions: costExtensions(spent.status, 1),
      },
      200,
    );
  }
  const reply = (userErrors: { field: string[]; message: string }[]) =>
    c.json({ data: { flowTriggerReceive: { userErrors } }, extensions: costExtensions(spent.status, 1) });
  const handle = body.variables?.handle;
  const payload = body.variables?.payload;
  const emptyPayload =
    payload === undefined ||
    payload === null ||
    (typeof payload === 'object' && Object.keys(payload as object).length === 0);
  if (typeof handle !== 'string' || handle === '' || emptyPayload) {
    return reply([{ field: ['handle'], message: SANDBOX_MESSAGES.argsRequired }]);
  }
  if (Buffer.byteLength(JSON.stringify(payload)) > FLOW_PAYLOAD_LIMIT_BYTES) {
    return reply([{ field: ['body'], message: SANDBOX_MESSAGES.tooLarge }]);
  }
  const def = state.definitions.get(handle);
  if (!def) return reply([{ field: ['body'], message: SANDBOX_MESSAGES.invalidHandle(handle) }]);
  if (typeof payload !== 'object' || Array.isArray(payload)) {
    return reply([{ field: ['body'], message: SANDBOX_MESSAGES.invalidType('payload', 'object') }]);
  }
  const invalid = validatePayload(def, payload as Record<string, unknown>);
  if (invalid) return reply([invalid]);

  const received: ReceivedTrigger = {
    seq: ++state.seq,
    shop,
    handle,
    apiVersion: c.req.param('version'),
    payload: payload as Record<string, unknown>,
    receivedAt: nowMs(),
    tokenSha256: createHash('sha256').update(token).digest('hex').slice(0, 12),
  };
  state.triggers.push(received);
  // Drop the oldest in slices of a tenth, not one per call: shifting the array on every call
  // would cost time in proportion to the record's length.
  if (state.triggers.length > state.maxRecorded) {
    state.triggers.splice(0, state.triggers.length - state.maxRecorded + Math.floor(state.maxRecorded / 10));
  }
  for (const l of state.listeners) l(received);
  return reply([]);
}

/** The answer a fault injected for this call makes, or undefined when the fault lets the call through. */
async function injectedFault(
  c: GraphqlContext,
  state: SandboxState,
  shop: string,
  spec: FaultSpec,
  incoming: IncomingMessage | undefined,
): Promise<Response | undefined> {
  switch (spec.mode) {
    case 'reset': {
      incoming?.socket.destroy();
      return new Response(null, { status: 500 });
    }
    case 'timeout':
      await sleepWhileConnected(spec.hang_ms ?? 60_000, incoming);
      return c.json({ errors: [{ message: SANDBOX_MESSAGES.internal }] }, 504);
    case 'revoked':
      return c.json({ errors: SANDBOX_MESSAGES.invalidToken }, 401);
    case 'frozen':
      return c.json({ errors: SANDBOX_MESSAGES.frozen }, 402);
    case 'locked':
      return c.json({ errors: SANDBOX_MESSAGES.locked }, 423);
    case 'access_denied':
      return c.json({ errors: SANDBOX_MESSAGES.accessDenied }, 403);
    case 'access_denied_graphql':
      return c.json(
        {
          data: { flowTriggerReceive: null },
          errors: [{ message: SANDBOX_MESSAGES.accessDeniedGraphql, extensions: { code: 'ACCESS_DENIED' } }],
        },
        200,
      );
    case 'not_found':
      return c.json({ errors: SANDBOX_MESSAGES.notFound }, 404);
    case 'http_500':
    case 'http_502':
    case 'http_503':
      return c.json(
        { errors: [{ message: SANDBOX_MESSAGES.internal, extensions: { code: 'INTERNAL_SERVER_ERROR' } }] },
        Number(spec.mode.slice(5)) as 500 | 502 | 503,
      );
    case 'throttled_200':
    case 'throttled_429': {
      const body = {
        errors: [
          {
            message: SANDBOX_MESSAGES.throttled,
            extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/rate-limits' },
          },
        ],
        extensions: costExtensions(throttleStatus(bucketOf(state, shop), 0), null),
      };
      if (spec.mode === 'throttled_429') {
        c.header('Retry-After', String(spec.retry_after_s ?? 1));
        return c.json(body, 429);
      }
      return c.json(body, 200);
    }
    default:
      break;
  }
  return undefined;
}
