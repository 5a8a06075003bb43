// Every configuration name the process reads lives here, with its default.
// Services never read process.env; they receive a Config.
import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  /** Public origin used to build absolute docs and ingest URLs. */
  publicUrl: string;
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
    /** Replaces every plan's body retention (tests, short-lived demos); null = the plan's days. */
    bodyRetentionOverrideMs: number | null;
  };
  intake: {
    maxBodyBytes: number;
  };
  intents: {
    /** How long a preview stays confirmable. */
    previewTtlMs: number;
    /** How long Idempotency-Key records (and their stored responses) are kept. */
    idempotencyKeyTtlMs: number;
    /** A replay within this long after a delivery needs an explicit acknowledgement. */
    recentDeliveryWindowMs: number;
  };
  mcp: {
    /** Browser origins (besides loopback and the public URL's origin) allowed to call the MCP endpoint. */
    allowedOrigins: string[];
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
  dataDir: 'FLOWPORT_DATA_DIR',
  databaseUrl: 'FLOWPORT_DATABASE_URL',
  databasePoolSize: 'FLOWPORT_DATABASE_POOL_SIZE',
  secretKey: 'FLOWPORT_SECRET_KEY',
  shopifyAdminBaseUrl: 'FLOWPORT_SHOPIFY_ADMIN_BASE_URL',
  shopifyApiVersion: 'FLOWPORT_SHOPIFY_API_VERSION',
  worker: 'FLOWPORT_WORKER',
  workerLeaseMs: 'FLOWPORT_WORKER_LEASE_MS',
  workerConcurrencyPerShop: 'FLOWPORT_WORKER_CONCURRENCY_PER_SHOP',
  workerRequestTimeoutMs: 'FLOWPORT_WORKER_REQUEST_TIMEOUT_MS',
  workerMaxInFlight: 'FLOWPORT_WORKER_MAX_IN_FLIGHT',
  retryBaseMs: 'FLOWPORT_RETRY_BASE_MS',
  retryCapMs: 'FLOWPORT_RETRY_CAP_MS',
  retryMaxAttempts: 'FLOWPORT_RETRY_MAX_ATTEMPTS',
  retentionSweepIntervalMs: 'FLOWPORT_RETENTION_SWEEP_INTERVAL_MS',
  bodyRetentionOverrideMs: 'FLOWPORT_BODY_RETENTION_OVERRIDE_MS',
  maxBodyBytes: 'FLOWPORT_INTAKE_MAX_BODY_BYTES',
  intentTtlSeconds: 'FLOWPORT_INTENT_TTL_SECONDS',
  mcpAllowedOrigins: 'FLOWPORT_MCP_ALLOWED_ORIGINS',
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

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const port = int(env, ENV.port, DEFAULT_PORT);
  const root = process.cwd();
  const base: Config = {
    port,
    host: env[ENV.host] ?? '0.0.0.0',
    publicUrl: (env[ENV.publicUrl] || `http://localhost:${port}`).replace(/\/+$/, ''),
    dataDir: resolve(root, env[ENV.dataDir] ?? 'data'),
    databaseUrl: env[ENV.databaseUrl] || null,
    databasePoolSize: int(env, ENV.databasePoolSize, 10),
    secretKey: env[ENV.secretKey] || null,
    shopify: {
      adminBaseUrl: env[ENV.shopifyAdminBaseUrl] || null,
      apiVersion: env[ENV.shopifyApiVersion] || DEFAULT_SHOPIFY_API_VERSION,
    },
    worker: {
      enabled: (env[ENV.worker] ?? 'on') !== 'off',
      pollIntervalMs: 200,
      leaseMs: int(env, ENV.workerLeaseMs, 30_000),
      concurrencyPerShop: int(env, ENV.workerConcurrencyPerShop, 4),
      requestTimeoutMs: int(env, ENV.workerRequestTimeoutMs, 10_000),
      maxInFlight: int(env, ENV.workerMaxInFlight, 64),
      retryBaseMs: int(env, ENV.retryBaseMs, 5_000),
      retryCapMs: int(env, ENV.retryCapMs, 600_000),
      maxAttempts: int(env, ENV.retryMaxAttempts, 8),
      retentionSweepIntervalMs: int(env, ENV.retentionSweepIntervalMs, 60_000),
      bodyRetentionOverrideMs: env[ENV.bodyRetentionOverrideMs] ? int(env, ENV.bodyRetentionOverrideMs, 0) : null,
    },
    intake: {
      maxBodyBytes: int(env, ENV.maxBodyBytes, 1024 * 1024),
    },
    intents: {
      previewTtlMs: int(env, ENV.intentTtlSeconds, 15 * 60) * 1000,
      idempotencyKeyTtlMs: 24 * 3_600_000,
      recentDeliveryWindowMs: 10 * 60_000,
    },
    mcp: {
      allowedOrigins: (env[ENV.mcpAllowedOrigins] ?? '')
        .split(',')
        .map((o) => o.trim().replace(/\/+$/, ''))
        .filter(Boolean),
    },
    siteDir: resolve(root, env[ENV.siteDir] ?? 'site/dist'),
    buildCommit: env[ENV.buildCommit] || 'unknown',
    logLevel: (env[ENV.logLevel] as Config['logLevel']) || 'info',
  };
  return { ...base, ...overrides };
}

export function isSandbox(config: Config): boolean {
  return config.shopify.adminBaseUrl === null;
}
