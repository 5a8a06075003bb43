// Every configuration name the process reads lives here, with its default.
// Services never read process.env; they receive a Config.
import { resolve } from 'node:path';
import { SITE_STAMP_FILE } from './docs-paths.ts';
import { BlockList, isIP } from 'node:net';

export interface Config {
  port: number;
  host: string;
  /** Public origin used to build absolute docs and ingest URLs. */
  publicUrl: string;
  http: {
    /**
     * How long a client has to send a whole request, headers and body (Node's `requestTimeout`;
     * headers alone get at most this long too). Past it: 408 `request_timeout`, connection closed;
     * on intake with a receipt (api/src/http/request-timeout.ts).
     */
    requestTimeoutMs: number;
    /** Proxies (addresses, CIDR ranges) whose X-Forwarded-For names the client (http/client-address.ts). */
    trustedProxies: string[];
  };
  oauth: {
    /** Dynamic client registrations allowed per hour, from all addresses together. */
    registrationsPerHour: number;
  };
  dataDir: string;
  databaseUrl: string | null;
  /** Connections per process when the store is PostgreSQL. */
  databasePoolSize: number;
  /** 32-byte key for AES-256-GCM; null means "generate one in the data dir" (sandbox). */
  secretKey: string | null;
  shopify: {
    /** When null the process runs in sandbox mode. */
    adminBaseUrl: string | null;
    apiVersion: string;
    /** The app's client id (API key): OAuth install, session-token audience. Null: sandbox stand-in's, or install refused. */
    clientId: string | null;
    /**
     * The app's client secret (API secret key): verifies OAuth callbacks, Shopify webhooks (privacy,
     * app/uninstalled, Flow lifecycle) and session tokens. Null: privacy webhooks are refused; in
     * sandbox mode the install path uses the sandbox app's own credentials (api/src/lib/shopify-app.ts).
     */
    clientSecret: string | null;
    /** Access scopes the install asks for (shopify.app.toml declares the same list; a test checks it). */
    scopes: readonly string[];
  };
  worker: {
    enabled: boolean;
    pollIntervalMs: number;
    leaseMs: number;
    concurrencyPerShop: number;
    requestTimeoutMs: number;
    /** Deliveries in flight per worker process, all shops together. */
    maxInFlight: number;
    /** Retry schedule: exponential backoff with full jitter (api/src/handoff/outcomes.ts). */
    retryBaseMs: number;
    retryCapMs: number;
    maxAttempts: number;
    retentionSweepIntervalMs: number;
    /** How often one held event of a shop Shopify refuses (UNAVAILABLE_SHOP in handoff/outcomes.ts) is sent as a probe. */
    shopProbeIntervalMs: number;
    /** Replaces every plan's body retention (tests, short-lived demos); null = the plan's days. */
    bodyRetentionOverrideMs: number | null;
  };
  intake: {
    maxBodyBytes: number;
    /**
     * How long intake trusts its cached endpoint (status, config, secrets). Changes made in this
     * process apply at once, and on PostgreSQL so do other processes' (NOTIFY); this bounds the
     * rest: changes from another process on SQLite, or a lost notification.
     */
    endpointCacheMs: number;
  };
  intents: {
    /** How long a preview stays confirmable. */
    previewTtlMs: number;
    /** How long Idempotency-Key records (and their stored responses) are kept. */
    idempotencyKeyTtlMs: number;
    /** A replay within this long after a delivery needs an explicit acknowledgement. */
    recentDeliveryWindowMs: number;
    /** Events per second a bulk replay is replayed at (never above Shopify's Standard restore rate). */
    bulkReplayRatePerSecond: number;
    /** How often alert triggers are evaluated and due alert messages sent. */
    alertIntervalMs: number;
    /** Alert webhooks may target loopback and private addresses (default: in sandbox mode only). */
    alertPrivateTargets: boolean;
  };
  mcp: {
    /** Browser origins (besides loopback and the public URL's origin) allowed to call the MCP endpoint. */
    allowedOrigins: string[];
  };
  metrics: {
    /** Serve /metrics to other hosts too (default: this machine only, like every loopback-only route). */
    remote: boolean;
    /** Bearer token that opens GET /metrics to a scraper elsewhere; null: none. A secret. */
    token: string | null;
  };
  siteDir: string;
  buildCommit: string;
  logLevel: 'silent' | 'info' | 'debug';
}

/** Environment variable names, defined once (docs generate from this list). */
export const ENV = {
  port: 'PORT',
  host: 'HOST',
  publicUrl: 'FLOWPORT_PUBLIC_URL',
  httpRequestTimeoutMs: 'FLOWPORT_HTTP_REQUEST_TIMEOUT_MS',
  dataDir: 'FLOWPORT_DATA_DIR',
  databaseUrl: 'FLOWPORT_DATABASE_URL',
  databasePoolSize: 'FLOWPORT_DATABASE_POOL_SIZE',
  secretKey: 'FLOWPORT_SECRET_KEY',
  shopifyAdminBaseUrl: 'FLOWPORT_SHOPIFY_ADMIN_BASE_URL',
  shopifyApiVersion: 'FLOWPORT_SHOPIFY_API_VERSION',
  shopifyClientId: 'FLOWPORT_SHOPIFY_CLIENT_ID',
  shopifyClientSecret: 'FLOWPORT_SHOPIFY_CLIENT_SECRET',
  worker: 'FLOWPORT_WORKER',
  workerLeaseMs: 'FLOWPORT_WORKER_LEASE_MS',
  workerConcurrencyPerShop: 'FLOWPORT_WORKER_CONCURRENCY_PER_SHOP',
  workerRequestTimeoutMs: 'FLOWPORT_WORKER_REQUEST_TIMEOUT_MS',
  workerMaxInFlight: 'FLOWPORT_WORKER_MAX_IN_FLIGHT',
  retryBaseMs: 'FLOWPORT_RETRY_BASE_MS',
  retryCapMs: 'FLOWPORT_RETRY_CAP_MS',
  retryMaxAttempts: 'FLOWPORT_RETRY_MAX_ATTEMPTS',
  retentionSweepIntervalMs: 'FLOWPORT_RETENTION_SWEEP_INTERVAL_MS',
  shopProbeIntervalMs: 'FLOWPORT_SHOP_PROBE_INTERVAL_MS',
  bodyRetentionOverrideMs: 'FLOWPORT_BODY_RETENTION_OVERRIDE_MS',
  maxBodyBytes: 'FLOWPORT_INTAKE_MAX_BODY_BYTES',
  endpointCacheMs: 'FLOWPORT_INTAKE_ENDPOINT_CACHE_MS',
  intentTtlSeconds: 'FLOWPORT_INTENT_TTL_SECONDS',
  bulkReplayRatePerSecond: 'FLOWPORT_BULK_REPLAY_RATE',
  alertIntervalMs: 'FLOWPORT_ALERT_INTERVAL_MS',
  alertPrivateTargets: 'FLOWPORT_ALERT_PRIVATE_TARGETS',
  mcpAllowedOrigins: 'FLOWPORT_MCP_ALLOWED_ORIGINS',
  trustedProxies: 'FLOWPORT_TRUSTED_PROXIES',
  oauthRegistrationsPerHour: 'FLOWPORT_OAUTH_REGISTRATIONS_PER_HOUR',
  metricsRemote: 'FLOWPORT_METRICS_REMOTE',
  metricsToken: 'FLOWPORT_METRICS_TOKEN',
  siteDir: 'FLOWPORT_SITE_DIR',
  buildCommit: 'FLOWPORT_BUILD_COMMIT',
  logLevel: 'FLOWPORT_LOG_LEVEL',
} as const;

/** What the `flowport` CLI reads as an API client (not the server): where Flowport is and the grant token. */
export const CLI_ENV = {
  baseUrl: 'FLOWPORT_BASE_URL',
  token: 'FLOWPORT_TOKEN',
} as const;

export const DEFAULT_PORT = 8787;
export const DEFAULT_SHOPIFY_API_VERSION = '2026-10';

/**
 * The Admin API access scopes the app asks for at install: none. `flowTriggerReceive` needs no
 * access scope (Flow triggers are the app's own extensions). shopify.app.toml declares the same
 * (tests/shopify/app-config.test.ts checks that the file and this list agree).
 */
export const SHOPIFY_ACCESS_SCOPES: readonly string[] = [];

/** Numeric defaults, defined once: loadConfig uses them and the configuration table shows them. */
export const DEFAULTS = {
  // Senders post at most 1 MiB; 30 s is generous for that and keeps a slow or stalled client from
  // holding a connection for Node's default 5 minutes.
  httpRequestTimeoutMs: 30_000,
  // Registrations from all addresses per clock hour: room for many new MCP clients, not a flood.
  oauthRegistrationsPerHour: 500,
  databasePoolSize: 10,
  workerLeaseMs: 30_000,
  // Calls in flight a shop needs = the rate Shopify allows it × a call's time (Little's law): a
  // trigger costs 1 point, Plus restores 1,000 points/s (Standard 100), so 64 in flight carry a
  // Plus shop's 1,000/s at calls of up to 64 ms (a Standard shop's 100/s at up to 640 ms). The
  // worker paces each shop by Shopify's throttleStatus, so more in flight never means more
  // THROTTLED answers (ADR 0200, "Pacing"). 16 held one shop near 80/s on a loaded machine.
  workerConcurrencyPerShop: 64,
  workerRequestTimeoutMs: 10_000,
  // Four shops at full concurrency, or hundreds of small shops' calls, per process.
  workerMaxInFlight: 256,
  retryBaseMs: 5_000,
  retryCapMs: 600_000,
  retryMaxAttempts: 8,
  retentionSweepIntervalMs: 60_000,
  shopProbeIntervalMs: 15 * 60_000,
  maxBodyBytes: 1024 * 1024,
  endpointCacheMs: 1_000,
  intentTtlSeconds: 15 * 60,
  // Half of Shopify's Standard restore rate (100/s): live events keep the other half.
  bulkReplayRatePerSecond: 50,
  alertIntervalMs: 30_000,
} as const;

/**
 * How long a preview stays confirmable (humans in the loop, issue 42, ADR 0430): the server's
 * default (`intentTtlSeconds`, 15 minutes), or what the preview asks for with the body field
 * every preview kind shares, between these bounds (api/src/intents/preview.ts checks it). The
 * manifest states them.
 */
export const PREVIEW_LIFETIME = {
  field: 'expires_in_seconds',
  minSeconds: 60,
  maxSeconds: 24 * 3600,
} as const;

/** Shorter would refuse ordinary requests on a busy machine; 0 (Node: no limit) is not offered. */
const MIN_HTTP_REQUEST_TIMEOUT_MS = 100;

const code = (v: string | number) => `\`${v}\``;

/**
 * What each variable in ENV sets and its default as shown to operators: the configuration
 * table of the deployment page is generated from this (scripts/docs/generate.ts).
 */
export const CONFIG_VARIABLES: Record<keyof typeof ENV, { default: string; about: string }> = {
  port: {
    default: code(DEFAULT_PORT),
    about:
      'HTTP port of `npx flowport serve`. In sandbox mode a worker-only process hands off to the stand-in at this port.',
  },
  host: { default: code('0.0.0.0'), about: 'Interface to listen on.' },
  publicUrl: {
    default: code('http://localhost:<PORT>'),
    about:
      "Public origin used in ingest URLs, docs links and shared diagnostics links. Set the load balancer's origin on every process.",
  },
  httpRequestTimeoutMs: {
    default: code(DEFAULTS.httpRequestTimeoutMs),
    about: `How long a client has to send a whole request, headers and body (at least ${MIN_HTTP_REQUEST_TIMEOUT_MS}). A slower one gets 408 \`request_timeout\` and its connection is closed; at an ingest URL the refusal gets a receipt.`,
  },
  dataDir: {
    default: code('./data'),
    about: 'Data directory: the SQLite store, `secret.key` when `FLOWPORT_SECRET_KEY` is unset, sandbox credentials.',
  },
  databaseUrl: {
    default: 'unset (SQLite)',
    about: '`postgres://<USER>@<HOST>:5432/<DATABASE>` selects PostgreSQL.',
  },
  databasePoolSize: { default: code(DEFAULTS.databasePoolSize), about: 'Connections per process on PostgreSQL.' },
  secretKey: {
    default: 'unset: `secret.key` in the data directory',
    about:
      '32-byte key (64 hex characters or base64) that seals secrets at rest. Required in practice with several processes.',
  },
  shopifyAdminBaseUrl: {
    default: 'unset: sandbox mode',
    about: 'Shopify Admin API base URL template, `{shop}` replaced by the shop domain (`https://{shop}`).',
  },
  shopifyApiVersion: {
    default: code(DEFAULT_SHOPIFY_API_VERSION),
    about:
      'Shopify Admin API version for `flowTriggerReceive`: `YYYY-01`, `-04`, `-07`, `-10` or `unstable` (start-up refuses anything else).',
  },
  shopifyClientId: {
    default: "unset: the install path is refused (sandbox mode: the sandbox app's own id)",
    about:
      "The Shopify app's client id (API key), as in `shopify.app.toml`'s `client_id`. Used by the OAuth install (`/shopify/install`) and to check a session token's audience.",
  },
  shopifyClientSecret: {
    default:
      "unset: privacy webhooks are refused (401); the install path is refused (sandbox mode: the sandbox app's own secret)",
    about:
      "The Shopify app's client secret (API secret key). Verifies the OAuth callback's HMAC, the HMAC of Shopify's webhooks (privacy webhooks at `/shopify/webhooks/compliance`, `app/uninstalled`, Flow's trigger lifecycle callback) and session tokens. A secret: never logged or shown.",
  },
  worker: { default: code('on'), about: '`off` runs no delivery worker in `serve` (the same as `--no-worker`).' },
  workerLeaseMs: {
    default: code(DEFAULTS.workerLeaseMs),
    about:
      "How long a claimed delivery is reserved; a crashed worker's events are re-claimed after it. Must exceed the request timeout (start-up refuses otherwise).",
  },
  workerConcurrencyPerShop: {
    default: code(DEFAULTS.workerConcurrencyPerShop),
    about:
      "Deliveries in flight per shop, across all workers. The worker also paces each shop by the `throttleStatus` of Shopify's answers, so a shop is never sent more than its bucket allows.",
  },
  workerRequestTimeoutMs: { default: code(DEFAULTS.workerRequestTimeoutMs), about: 'Timeout of one call to Shopify.' },
  workerMaxInFlight: {
    default: code(DEFAULTS.workerMaxInFlight),
    about: 'Deliveries in flight per worker process, all shops together.',
  },
  retryBaseMs: { default: code(DEFAULTS.retryBaseMs), about: 'Retry backoff base (full jitter).' },
  retryCapMs: { default: code(DEFAULTS.retryCapMs), about: 'Longest retry delay.' },
  retryMaxAttempts: {
    default: code(DEFAULTS.retryMaxAttempts),
    about: 'Attempts before an event fails as exhausted.',
  },
  retentionSweepIntervalMs: {
    default: code(DEFAULTS.retentionSweepIntervalMs),
    about: 'How often a worker purges expired bodies.',
  },
  shopProbeIntervalMs: {
    default: code(DEFAULTS.shopProbeIntervalMs),
    about:
      "While Shopify refuses every call for a shop's store (the statuses are listed under Held events on the event lifecycle page), one of its held events is sent this often as a probe; the first one accepted releases the rest.",
  },
  bodyRetentionOverrideMs: {
    default: "unset: the plan's days",
    about: "Replaces every plan's body retention (tests, short-lived demos).",
  },
  maxBodyBytes: { default: code(DEFAULTS.maxBodyBytes), about: 'Largest request body intake reads.' },
  endpointCacheMs: {
    default: code(DEFAULTS.endpointCacheMs),
    about:
      "How long intake trusts its cached endpoint. Changes made through the serving process apply at once, and on PostgreSQL so do other processes' (NOTIFY); this bounds changes made by another process on SQLite (e.g. `npx flowport endpoints import-secret`) and a lost notification.",
  },
  intentTtlSeconds: {
    default: code(DEFAULTS.intentTtlSeconds),
    about: 'How long an action-intent preview stays confirmable.',
  },
  bulkReplayRatePerSecond: {
    default: code(DEFAULTS.bulkReplayRatePerSecond),
    about:
      "Events per second a confirmed bulk replay turns into replays (at least 1; never above Shopify's Standard restore rate of 100 calls per second).",
  },
  alertIntervalMs: {
    default: code(DEFAULTS.alertIntervalMs),
    about: 'How often a worker evaluates alert triggers for subscribed shops and sends due alert messages.',
  },
  alertPrivateTargets: {
    default: '`on` in sandbox mode, `off` otherwise',
    about:
      '`on` lets alert webhooks target loopback, private and reserved addresses (a receiver on this machine or inside your network). Off, an alert URL whose host is or resolves to such an address is refused (`alert_target_private`), when it is chosen and before each send.',
  },
  mcpAllowedOrigins: {
    default: 'empty',
    about: 'Extra browser origins allowed to call the MCP endpoint (comma-separated).',
  },
  trustedProxies: {
    default: 'empty: the socket peer is the client',
    about:
      'Reverse proxies in front of Flowport (comma-separated addresses or CIDR ranges, e.g. `10.0.0.0/8, ::1`). When a request comes from one, the client is the right-most `X-Forwarded-For` entry that is not a trusted proxy; per-address limits (client registration) key on it. Leave empty when clients connect directly: a forwarded header is then ignored.',
  },
  oauthRegistrationsPerHour: {
    default: code(DEFAULTS.oauthRegistrationsPerHour),
    about:
      'Dynamic client registrations (`/oauth/register`) allowed per clock hour from all addresses together (each address also has at most 20). Past it: 429 `oauth_registration_cap_reached`.',
  },
  metricsRemote: {
    default: code('off'),
    about:
      '`on` serves `/metrics` to other hosts (a Prometheus elsewhere). Off, it answers only this machine (loopback peer and `Host`, no proxy header), like the sandbox stand-in: its counts cover every shop.',
  },
  metricsToken: {
    default: 'unset: no token opens `/metrics`',
    about:
      'Bearer token (at least 32 characters) that lets a scraper on another machine read `/metrics` (`Authorization: Bearer <METRICS_TOKEN>`) while it stays closed to everyone else. A secret: never logged or shown.',
  },
  siteDir: {
    default: code('site/dist'),
    about: `Where the built docs site is served from: the output of \`npm run build:site\` (its \`${SITE_STAMP_FILE}\`, written last, marks a complete build; without it nothing there is served).`,
  },
  buildCommit: {
    default: '`unknown` (`npm start` sets the git commit)',
    about: 'Build identifier reported by the manifest (`/agent/v1/manifest`).',
  },
  logLevel: { default: code('info'), about: '`silent`, `info` or `debug`.' },
};

type Env = Record<string, string | undefined>;

/** Shopify's quarterly Admin API versions (`2026-01`, `2026-04`, …) and `unstable`. */
export const SHOPIFY_API_VERSION_PATTERN = /^(?:\d{4}-(?:01|04|07|10)|unstable)$/;

/**
 * Worker settings that parse but cannot work: a zero timeout fails every call, zero concurrency
 * never delivers, and a lease no longer than the request timeout lets another worker re-claim a
 * call still in flight (a duplicate Flow run). Refused at start, naming the variable.
 */
function checkWorkerConfig(config: Config): void {
  const w = config.worker;
  for (const [name, value] of [
    [ENV.workerRequestTimeoutMs, w.requestTimeoutMs],
    [ENV.workerConcurrencyPerShop, w.concurrencyPerShop],
    [ENV.workerMaxInFlight, w.maxInFlight],
  ] as const) {
    if (value < 1) throw new Error(`${name} must be at least 1, got ${value}`);
  }
  if (w.leaseMs <= w.requestTimeoutMs)
    throw new Error(
      `${ENV.workerLeaseMs} (${w.leaseMs}) must exceed ${ENV.workerRequestTimeoutMs} (${w.requestTimeoutMs}): a lease that ends while Shopify is still being called lets another worker deliver the same event again`,
    );
  if (!SHOPIFY_API_VERSION_PATTERN.test(config.shopify.apiVersion))
    throw new Error(
      `${ENV.shopifyApiVersion} must be a Shopify API version such as ${DEFAULT_SHOPIFY_API_VERSION} (YYYY-01, -04, -07 or -10) or unstable, got "${config.shopify.apiVersion}"`,
    );
}

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/**
 * The public URL absolute links use: FLOWPORT_PUBLIC_URL, else `http://localhost:<PORT>`. The server
 * (loadConfig) and the docs build (scripts/docs/lib/site-paths.ts) both derive it here, so the
 * docs' absolute links (llms.txt, twins, canonical URLs) name the same origin the server does.
 */
export function publicUrlFrom(env: Env = process.env): string {
  const raw = env[ENV.publicUrl]?.trim() || `http://localhost:${int(env, ENV.port, DEFAULT_PORT)}`;
  return raw.replace(/\/+$/, '');
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = int(env, ENV.port, DEFAULT_PORT);
  const root = process.cwd();
  const base: Config = {
    port,
    host: env[ENV.host] ?? '0.0.0.0',
    publicUrl: publicUrlFrom(env),
    http: {
      requestTimeoutMs: int(env, ENV.httpRequestTimeoutMs, DEFAULTS.httpRequestTimeoutMs),
      trustedProxies: (env[ENV.trustedProxies] ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    },
    oauth: {
      registrationsPerHour: Math.max(1, int(env, ENV.oauthRegistrationsPerHour, DEFAULTS.oauthRegistrationsPerHour)),
    },
    dataDir: resolve(root, env[ENV.dataDir] ?? 'data'),
    databaseUrl: env[ENV.databaseUrl] || null,
    databasePoolSize: int(env, ENV.databasePoolSize, DEFAULTS.databasePoolSize),
    secretKey: env[ENV.secretKey] || null,
    shopify: {
      adminBaseUrl: env[ENV.shopifyAdminBaseUrl] || null,
      apiVersion: env[ENV.shopifyApiVersion]?.trim() || DEFAULT_SHOPIFY_API_VERSION,
      clientId: env[ENV.shopifyClientId]?.trim() || null,
      clientSecret: env[ENV.shopifyClientSecret] || null,
      scopes: SHOPIFY_ACCESS_SCOPES,
    },
    worker: {
      enabled: (env[ENV.worker] ?? 'on') !== 'off',
      pollIntervalMs: 200,
      leaseMs: int(env, ENV.workerLeaseMs, DEFAULTS.workerLeaseMs),
      concurrencyPerShop: int(env, ENV.workerConcurrencyPerShop, DEFAULTS.workerConcurrencyPerShop),
      requestTimeoutMs: int(env, ENV.workerRequestTimeoutMs, DEFAULTS.workerRequestTimeoutMs),
      maxInFlight: int(env, ENV.workerMaxInFlight, DEFAULTS.workerMaxInFlight),
      retryBaseMs: int(env, ENV.retryBaseMs, DEFAULTS.retryBaseMs),
      retryCapMs: int(env, ENV.retryCapMs, DEFAULTS.retryCapMs),
      maxAttempts: int(env, ENV.retryMaxAttempts, DEFAULTS.retryMaxAttempts),
      retentionSweepIntervalMs: int(env, ENV.retentionSweepIntervalMs, DEFAULTS.retentionSweepIntervalMs),
      shopProbeIntervalMs: int(env, ENV.shopProbeIntervalMs, DEFAULTS.shopProbeIntervalMs),
      bodyRetentionOverrideMs: env[ENV.bodyRetentionOverrideMs] ? int(env, ENV.bodyRetentionOverrideMs, 0) : null,
    },
    intake: {
      maxBodyBytes: int(env, ENV.maxBodyBytes, DEFAULTS.maxBodyBytes),
      endpointCacheMs: int(env, ENV.endpointCacheMs, DEFAULTS.endpointCacheMs),
    },
    intents: {
      previewTtlMs: int(env, ENV.intentTtlSeconds, DEFAULTS.intentTtlSeconds) * 1000,
      idempotencyKeyTtlMs: 24 * 3_600_000,
      recentDeliveryWindowMs: 10 * 60_000,
      bulkReplayRatePerSecond: Math.max(1, int(env, ENV.bulkReplayRatePerSecond, DEFAULTS.bulkReplayRatePerSecond)),
      alertIntervalMs: Math.max(50, int(env, ENV.alertIntervalMs, DEFAULTS.alertIntervalMs)),
      alertPrivateTargets: env[ENV.alertPrivateTargets]
        ? env[ENV.alertPrivateTargets] === 'on'
        : !env[ENV.shopifyAdminBaseUrl],
    },
    mcp: {
      allowedOrigins: (env[ENV.mcpAllowedOrigins] ?? '')
        .split(',')
        .map((o) => o.trim().replace(/\/+$/, ''))
        .filter(Boolean),
    },
    metrics: { remote: (env[ENV.metricsRemote] ?? 'off') === 'on', token: env[ENV.metricsToken] || null },
    siteDir: resolve(root, env[ENV.siteDir] ?? 'site/dist'),
    buildCommit: env[ENV.buildCommit] || 'unknown',
    logLevel: (env[ENV.logLevel] as Config['logLevel']) || 'info',
  };
  checkWorkerConfig(base);
  parseTrustedProxies(base.http.trustedProxies);
  if (base.metrics.token !== null && base.metrics.token.length < 32)
    throw new Error(`${ENV.metricsToken} must be at least 32 characters (a random secret)`);
  if (base.http.requestTimeoutMs < MIN_HTTP_REQUEST_TIMEOUT_MS)
    throw new Error(
      `${ENV.httpRequestTimeoutMs} must be at least ${MIN_HTTP_REQUEST_TIMEOUT_MS}, got ${base.http.requestTimeoutMs}`,
    );
  return { ...base, ...overrides };
}

export function isSandbox(config: Config): boolean {
  return config.shopify.adminBaseUrl === null;
}

// ---------------------------------------------------------------- trusted proxies
// FLOWPORT_TRUSTED_PROXIES parsed (ADR 1430); CIDR matching is Node's own net.BlockList. The
// client address they give a request: api/src/http/client-address.ts.

/** The proxies whose X-Forwarded-For is believed: addresses and CIDR ranges, IPv4 and IPv6. */
export interface TrustedProxies {
  readonly list: BlockList;
  readonly empty: boolean;
}

/** `::ffff:10.0.0.1` → `10.0.0.1`; brackets and zone ids dropped; null when not an IP address. */
export function normalizeAddress(raw: string): string | null {
  let a = raw.trim();
  if (a.startsWith('[') && a.includes(']')) a = a.slice(1, a.indexOf(']'));
  a = a.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped?.[1]) a = mapped[1];
  return isIP(a) ? a : null;
}

/** Parses FLOWPORT_TRUSTED_PROXIES entries (`10.0.0.0/8`, `192.0.2.5`, `::1`); throws naming a bad one. */
export function parseTrustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList();
  for (const entry of entries) {
    const [addr = '', prefix, extra] = entry.trim().split('/');
    const ip = normalizeAddress(addr);
    const family = ip ? (isIP(ip) === 6 ? 'ipv6' : 'ipv4') : null;
    const max = family === 'ipv6' ? 128 : 32;
    const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (!ip || !family || extra !== undefined || !(bits >= 0 && bits <= max))
      throw new Error(
        `FLOWPORT_TRUSTED_PROXIES: "${entry.slice(0, 60)}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, ::1).`,
      );
    list.addSubnet(ip, bits, family);
  }
  return { list, empty: entries.length === 0 };
}
