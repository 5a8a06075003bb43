// Assembles one Flowport process from a Config: store, services, HTTP app,
// delivery worker and (sandbox mode) the Shopify stand-in. Tests use this too.
// On PostgreSQL several such processes share one database: new events wake the
// workers of every process through NOTIFY (they also poll, so a lost one only costs latency),
// and an endpoint changed through any process drops out of every process's intake cache the same
// way (a lost notification is bounded by config.intake.endpointCacheMs).
import { COMPLIANCE_WEBHOOK_PATH, complianceRoutes } from './shopify/compliance.ts';
import { localSandboxBaseUrl, shopifyAppCredentials } from './lib/shopify-app.ts';
import { flowLifecycleRoutes } from './shopify/flow-lifecycle.ts';
import { oauthRoutes } from './shopify/oauth.ts';
import { uninstallRoutes } from './shopify/uninstall.ts';
import { merchantRoutes } from './shopify/merchant/routes.ts';
import { consoleRoutes } from './shopify/console/routes.ts';
import { docsServed } from './docs-paths.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { grantGuard } from './auth/guard.ts';
import { type Config, isSandbox } from './config.ts';
import { EVENT_STATES } from './handoff/outcomes.ts';
import { DeliveryWorker } from './handoff/worker.ts';
import { AlertMonitor } from './intents/alerts.ts';
import { BulkReplayRunner } from './intents/bulk-replay-runner.ts';
import { createLogger, type Logger, type LoggerOptions, outcomeOf } from './observability/log.ts';
import { Metrics } from './observability/metrics.ts';
import { metricsRoutes } from './http/metrics.ts';
import { createApp } from './http/app.ts';
import type { AppEnv } from './http/types.ts';
import { Intake } from './intake/intake.ts';
import { withIntakeFastPath } from './http/node-intake.ts';
import { intakeRoutes } from './http/intake-routes.ts';
import { SHARED_DIAGNOSTICS_PATH, sharedDiagnosticsRoutes } from './http/shared-diagnostics.ts';
import { SecretBox } from './lib/crypto.ts';
import { INGEST_PATH_PREFIX, MCP_PATH } from './lib/package-info.ts';
import { oauthConsentRoutes } from './shopify/merchant/oauth-consent.ts';
import { oauthServerRoutes } from './http/oauth-routes.ts';
import { mcpApp, PROTECTED_RESOURCE_METADATA_PREFIX, protectedResourceMetadataApp } from './mcp/http.ts';
import { installGuard } from './operations/pipeline.ts';
import { OPERATIONS } from './operations/registry.ts';
import type { AnyOperation, Services } from './core/types.ts';
import { AppError } from './errors/problem.ts';
import { createSandboxState, SANDBOX_MOUNT_PATH, type SandboxState, sandboxApp } from './sandbox/app.ts';
import type { ShopRow } from './store/tables/shops.ts';
import type { Db } from './store/db.ts';
import { checkSecretKey } from './store/key-check.ts';
import { openStore } from './store/open.ts';
import { ENDPOINT_CHANGED_CHANNEL, EVENTS_DUE_CHANNEL, PostgresDb } from './store/postgres.ts';
import { closeUsage } from './usage/ledger.ts';

/** The route label of sender intake (fast path and Hono route alike). */
const INTAKE_ROUTE = `${INGEST_PATH_PREFIX}/:endpoint_id`;

export interface Runtime {
  config: Config;
  services: Services;
  app: Hono<AppEnv>;
  /** Node request listener: the intake fast path, then the app. What a server should listen with. */
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  worker: DeliveryWorker | null;
  /** The bulk replay runner (runs while the worker does); null without a worker. */
  bulkReplays: BulkReplayRunner | null;
  /** The alert monitor (runs while the worker does); null without a worker. */
  alerts: AlertMonitor | null;
  sandbox: SandboxState | null;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  db?: Db;
  /** Postgres application_name of this process's connections (e.g. `flowport worker`). */
  applicationName?: string;
  operations?: readonly AnyOperation[];
  now?: () => number;
  /** Where this process's structured log lines go (tests capture them); default stdout. */
  logDestination?: LoggerOptions['destination'];
}

export { localSandboxBaseUrl };

export function adminBaseUrlFor(config: Config, shop: ShopRow): string {
  if (shop.admin_base_url) return shop.admin_base_url;
  if (shop.sandbox || isSandbox(config)) return `${localSandboxBaseUrl(config)}/${shop.domain}`;
  const template = config.shopify.adminBaseUrl ?? 'https://{shop}';
  return template.replace('{shop}', shop.domain);
}

export async function createRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  installGuard(grantGuard);
  const { db, services, operations } = await openServices(config, options);
  const intake = sharedIntake(services, db);
  const sandbox = isSandbox(config) ? createSandboxState() : null;
  const app = createApp({
    services,
    operations,
    mounts: appMounts(config, services, operations, intake.get, sandbox),
    readiness: async () => ({ site: docsServed(config.siteDir) }),
  });
  const { worker, bulkReplays, alerts } = backgroundCompanions(config, services);
  await wireHooks(config, services, db, intake, worker, bulkReplays);
  const listener = withIntakeFastPath(
    intake.get,
    config.publicUrl,
    getRequestListener(app.fetch),
    (line) => (services.log as Logger).error({ kind: 'intake_error' }, line),
    intakeAnswered(services, intake),
  );
  return {
    config,
    services,
    app,
    listener,
    worker,
    bulkReplays,
    alerts,
    sandbox,
    async close() {
      await worker?.stop();
      // What this process counted in memory (grant uses, rate windows, read meters) goes in first.
      await closeUsage(db);
      await db.close();
    },
  };
}

/** The store (opened here unless given, its secret key checked) and the services every part shares. */
async function openServices(
  config: Config,
  options: RuntimeOptions,
): Promise<{ db: Db; services: Services; operations: readonly AnyOperation[] }> {
  const db =
    options.db ??
    (await openStore(config, options.applicationName ? { applicationName: options.applicationName } : {}));
  const secrets = config.secretKey ? SecretBox.fromString(config.secretKey) : SecretBox.fromDataDir(config.dataDir);
  try {
    await checkSecretKey(db, secrets);
  } catch (err) {
    if (!options.db) await db.close();
    throw err;
  }
  const operations = options.operations ?? OPERATIONS;
  const services: Services = {
    config,
    db,
    secrets,
    now: options.now ?? Date.now,
    registry: () => operations,
    hooks: {},
    metrics: new Metrics(db, { eventStates: EVENT_STATES }),
    log: createLogger(config, options.logDestination ? { destination: options.logDestination } : {}),
  };
  return { db, services, operations };
}

/** The process's one intake, made on first use; `peek` is it or null before then. */
interface SharedIntake {
  get: () => Intake;
  peek: () => Intake | null;
}

/** One intake (group committer, endpoint cache) behind both the Node fast path and the Hono route. */
function sharedIntake(services: Services, db: Db): SharedIntake {
  const { config } = services;
  let intake: Intake | null = null;
  const get = () => {
    if (!intake) {
      const created = new Intake(services);
      intake = created;
      // Other processes' endpoint changes (PostgreSQL): listened for once this process caches endpoints.
      if (db instanceof PostgresDb) {
        db.listen(ENDPOINT_CHANGED_CHANNEL, (endpointId) => created.invalidate(endpointId)).catch((err: unknown) => {
          if (config.logLevel !== 'silent')
            console.error(
              `listening for endpoint changes failed (changes from other processes apply within ${config.intake.endpointCacheMs} ms):`,
              err,
            );
        });
      }
    }
    return intake;
  };
  return { get, peek: () => intake };
}

/** Every app the Hono app mounts beside the operations: intake, the sandbox, Shopify's side, MCP, metrics. */
function appMounts(
  config: Config,
  services: Services,
  operations: readonly AnyOperation[],
  getIntake: () => Intake,
  sandbox: SandboxState | null,
): { path: string; app: Hono<AppEnv> }[] {
  const mounts: { path: string; app: Hono<AppEnv> }[] = [{ path: INGEST_PATH_PREFIX, app: intakeRoutes(getIntake) }];
  if (sandbox) {
    const refuseRemote = ({ reason, detail }: { reason: string; detail: string }) =>
      new AppError(reason === 'media' ? 'unsupported_media_type' : 'not_found', {
        detail: `The sandbox's Shopify stand-in answers only this machine's own tools and pages: its record holds the payloads handed to Flow. ${detail} Open it on this machine at http://localhost:${config.port}${SANDBOX_MOUNT_PATH}/triggers, or read events through /agent/v1/events.`,
      });
    // The stand-in plays Shopify's side of the install too: it signs with the app's credentials
    // and calls this process's webhook and lifecycle URLs over loopback.
    const shopifyApp = () => {
      const creds = shopifyAppCredentials(config);
      return creds ? { ...creds, appUrl: config.publicUrl, flowportUrl: `http://127.0.0.1:${config.port}` } : null;
    };
    mounts.push({
      path: SANDBOX_MOUNT_PATH,
      app: sandboxApp(sandbox, { refuseRemote, shopifyApp }) as unknown as Hono<AppEnv>,
    });
  }
  mounts.push({ path: SHARED_DIAGNOSTICS_PATH, app: sharedDiagnosticsRoutes(() => services) });
  mounts.push({ path: COMPLIANCE_WEBHOOK_PATH, app: complianceRoutes(() => services) });
  // The Shopify app: install (OAuth), app/uninstalled, Flow's trigger lifecycle, the merchant page.
  for (const routes of [
    oauthRoutes,
    uninstallRoutes,
    flowLifecycleRoutes,
    consoleRoutes,
    merchantRoutes,
    oauthServerRoutes,
    oauthConsentRoutes,
  ])
    mounts.push({ path: '/', app: routes(() => services) });
  mounts.push(
    { path: MCP_PATH, app: mcpApp(() => services, operations) },
    { path: PROTECTED_RESOURCE_METADATA_PREFIX, app: protectedResourceMetadataApp(() => services) },
  );

  mounts.push({ path: '/metrics', app: metricsRoutes(() => services) });
  return mounts;
}

/** The delivery worker and what runs beside it (bulk replays, alerts): only where the worker is enabled. */
function backgroundCompanions(
  config: Config,
  services: Services,
): { worker: DeliveryWorker | null; bulkReplays: BulkReplayRunner | null; alerts: AlertMonitor | null } {
  // Confirmed bulk replays run in every process that runs a delivery worker, started and stopped with it.
  const bulkReplays = config.worker.enabled ? new BulkReplayRunner(services) : null;
  // Alerts to the merchant: evaluated and sent by every process that runs a worker.
  const alerts = config.worker.enabled
    ? new AlertMonitor(services, {
        intervalMs: config.intents.alertIntervalMs,
        retryBaseMs: Math.min(5_000, config.intents.alertIntervalMs),
      })
    : null;
  const worker = config.worker.enabled
    ? new DeliveryWorker(services, {
        adminBaseUrl: (shop) => adminBaseUrlFor(config, shop),
        companions: [bulkReplays, alerts].filter((c) => c !== null),
      })
    : null;
  return { worker, bulkReplays, alerts };
}

/** The hooks domain code calls (an endpoint changed, kick the worker or bulk replays), and the worker's wake-ups. */
async function wireHooks(
  config: Config,
  services: Services,
  db: Db,
  intake: SharedIntake,
  worker: DeliveryWorker | null,
  bulkReplays: BulkReplayRunner | null,
): Promise<void> {
  const notify = db instanceof PostgresDb ? coalescedNotify(db, config) : null;
  // Endpoint changes made through this process apply to its intake at once; on PostgreSQL to every
  // other process's too (NOTIFY). On SQLite another process applies them within the cache time.
  services.hooks.endpointChanged = (endpointId) => {
    intake.peek()?.invalidate(endpointId);
    if (db instanceof PostgresDb) {
      db.run('SELECT pg_notify(?, ?)', [ENDPOINT_CHANGED_CHANNEL, endpointId]).catch((err: unknown) => {
        if (config.logLevel !== 'silent') console.error('notify of an endpoint change failed:', err);
      });
    }
  };
  services.hooks.kickBulkReplay = () => bulkReplays?.kick();
  services.hooks.kickWorker = () => {
    worker?.kick();
    notify?.();
  };
  if (worker && db instanceof PostgresDb) await db.listen(EVENTS_DUE_CHANNEL, () => worker.kick());
  if (worker && services.metrics) services.metrics.worker = worker;
}

/** What the intake fast path calls once it answered: its latency cells and request log line (the Hono app does both for the rest). */
function intakeAnswered(
  services: Services,
  intake: SharedIntake,
): NonNullable<Parameters<typeof withIntakeFastPath>[4]> {
  const log = services.log as Logger;
  const metrics = services.metrics as Metrics;
  const intakeCells = [0, 1, 2, 3, 4, 5].map((c) => metrics.httpCell(INTAKE_ROUTE, 'POST', c * 100));
  // Request lines come from a child logger per endpoint: pino writes a child's bindings (ids and
  // the route, never a secret-named field) once, so a line serialises only what changes per
  // request, and every call passes an object of one shape (pino leaves undefined values out). Kept
  // once the endpoint's shop is known; an endpoint not in intake's cache (unknown, or not yet
  // looked up) gets a child for that line alone, without a shop.
  const lineLoggers = new Map<string, Logger>();
  const lineLogger = (endpointId: string): Logger => {
    const kept = lineLoggers.get(endpointId);
    if (kept) return kept;
    const shopId = intake.peek()?.shopOf(endpointId);
    const child = log.child({
      kind: 'request',
      method: 'POST',
      route: INTAKE_ROUTE,
      ...(shopId === undefined ? {} : { shop_id: shopId }),
      endpoint_id: endpointId,
    });
    if (shopId !== undefined) {
      if (lineLoggers.size >= 10_000) lineLoggers.clear();
      lineLoggers.set(endpointId, child);
    }
    return child;
  };
  return (status, seconds, requestId, endpointId, code, eventId) => {
    intakeCells[Math.floor(status / 100)]?.observe(seconds);
    if (!log.isLevelEnabled('info')) return;
    lineLogger(endpointId).info(
      {
        request_id: requestId,
        status,
        outcome: outcomeOf(status),
        error_code: code ?? undefined,
        event_id: eventId ?? undefined,
        duration_ms: Math.round(seconds * 1e6) / 1e3,
      },
      'request',
    );
  };
}

/** NOTIFY the other processes' workers; at most one in flight, plus one more if kicked meanwhile. */
function coalescedNotify(db: PostgresDb, config: Config): () => void {
  let inFlight = false;
  let again = false;
  const send = (): void => {
    inFlight = true;
    again = false;
    db.run('SELECT pg_notify(?, ?)', [EVENTS_DUE_CHANNEL, ''])
      .catch((err: unknown) => {
        if (config.logLevel !== 'silent') console.error('notify failed:', err);
      })
      .finally(() => {
        inFlight = false;
        if (again) send();
      });
  };
  return () => {
    if (inFlight) again = true;
    else send();
  };
}
