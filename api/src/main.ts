// Process entry and roles. `serve`: the HTTP API (docs, Agent Operations, intake,
// MCP) plus the delivery worker unless turned off; `worker`: the delivery worker
// alone, with an optional port for /healthz and /metrics. On PostgreSQL any number
// of each share one database (docs/adr/0600-postgres-scale-out.md). `npm start`
// runs main(): serve, with the worker as FLOWPORT_WORKER says.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { type Config, isSandbox, loadConfig } from './config.ts';
import { docsServed } from './docs-paths.ts';
import { installClientErrorHandler } from './http/client-error.ts';
import { installExpectContinue } from './http/expect-continue.ts';
import { httpServerOptions } from './http/request-timeout.ts';
import { createRuntime, type Runtime } from './runtime.ts';
import { recordServedPublicUrl } from './services/served-url.ts';
import { writeServedUrlFile } from './lib/served-url-file.ts';
import { docsLine, ensureSandbox, SANDBOX_CREDENTIALS_FILE, sandboxBanner } from './sandbox/bootstrap.ts';
import { asStartupFailure, startupFailureLine } from './store/startup-failure.ts';
import { storeKind } from './store/open.ts';
import { ensurePrivateDir } from './lib/private-files.ts';
import { redactUrl } from './store/postgres.ts';

export interface RunningProcess {
  role: 'serve' | 'worker';
  /** Where this process answers HTTP (null: a worker without a port). */
  url: string | null;
  runtime: Runtime;
  /** Stops accepting work, lets deliveries in flight record their outcome, closes the store. */
  close(): Promise<void>;
}

type Log = (line: string) => void;

function storeDescription(config: Config): string {
  return storeKind(config) === 'postgres'
    ? `PostgreSQL ${redactUrl(config.databaseUrl as string)}`
    : `SQLite ${join(config.dataDir, 'flowport.db')}`;
}

async function listen(listener: RequestListener, cfg: Config): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer(httpServerOptions(cfg), listener);
  installClientErrorHandler(server, cfg.publicUrl);
  installExpectContinue(server, cfg);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
    server.listen(cfg.port, cfg.host);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

/** The HTTP API on config.port, with the delivery worker when `worker` (default: FLOWPORT_WORKER). */
export async function startServe(
  config: Config,
  options: { worker?: boolean; log?: Log } = {},
): Promise<RunningProcess> {
  return startServeOrFail(config, options).catch((err: unknown) => {
    throw asStartupFailure(err, config);
  });
}

async function startServeOrFail(config: Config, options: { worker?: boolean; log?: Log }): Promise<RunningProcess> {
  const log = options.log ?? ((line: string) => console.log(line));
  const withWorker = options.worker ?? config.worker.enabled;
  const cfg: Config = { ...config, worker: { ...config.worker, enabled: withWorker } };
  // Sandbox credentials live here even when the store is PostgreSQL.
  ensurePrivateDir(cfg.dataDir);
  const runtime = await createRuntime(cfg, { applicationName: withWorker ? 'flowport serve' : 'flowport serve api' });
  let server: Awaited<ReturnType<typeof listen>>;
  try {
    server = await listen(runtime.listener, cfg);
    // Operator commands on this host print ingest URLs from it (they do not see this environment).
    await recordServedPublicUrl(runtime.services.db, cfg.publicUrl, Date.now());
    // The CLI on this host finds this server by it (lib/served-url-file.ts), whatever PORT it took.
    writeServedUrlFile(cfg.dataDir, cfg.publicUrl, Date.now());
  } catch (err) {
    await runtime.close();
    throw err;
  }
  try {
    if (isSandbox(cfg)) {
      const { creds } = await ensureSandbox(runtime.services);
      log(sandboxBanner(creds, cfg.publicUrl, join(cfg.dataDir, SANDBOX_CREDENTIALS_FILE), docsServed(cfg.siteDir)));
    } else {
      log(`Flowport listening on ${cfg.publicUrl}`);
      log(docsLine(cfg.publicUrl, docsServed(cfg.siteDir)).trim());
    }
  } catch (err) {
    await server.close();
    await runtime.close();
    throw err;
  }
  log(
    `Store: ${storeDescription(cfg)}; delivery worker ${runtime.worker ? `on (${runtime.worker.owner})` : 'off (API only)'}.`,
  );
  runtime.worker?.start();
  return {
    role: 'serve',
    url: `http://${cfg.host === '0.0.0.0' ? '127.0.0.1' : cfg.host}:${server.port}`,
    runtime,
    async close() {
      await server.close();
      await runtime.close();
    },
  };
}

/** Paths a worker-only process answers on its optional port. */
const WORKER_PATHS = new Set(['/healthz', '/metrics']);

/**
 * The delivery worker alone: no API, no intake. With `port` it answers /healthz and
 * /metrics there (null: no port at all). In sandbox mode it hands off to the
 * stand-in of the API process at config.port.
 */
export async function startWorker(
  config: Config,
  options: { port?: number | null; host?: string; log?: Log } = {},
): Promise<RunningProcess> {
  return startWorkerOrFail(config, options).catch((err: unknown) => {
    throw asStartupFailure(err, { ...config, port: options.port ?? config.port, host: options.host ?? '127.0.0.1' });
  });
}

async function startWorkerOrFail(
  config: Config,
  options: { port?: number | null; host?: string; log?: Log },
): Promise<RunningProcess> {
  const log = options.log ?? ((line: string) => console.log(line));
  const cfg: Config = { ...config, worker: { ...config.worker, enabled: true } };
  const runtime = await createRuntime(cfg, { applicationName: 'flowport worker' });
  const worker = runtime.worker;
  if (!worker) throw new Error('the delivery worker did not start');
  let server: Awaited<ReturnType<typeof listen>> | null = null;
  if (options.port !== undefined && options.port !== null) {
    try {
      server = await listen(
        getRequestListener((req, env) =>
          WORKER_PATHS.has(new URL(req.url).pathname)
            ? runtime.app.fetch(req, env)
            : new Response('Not found: this is a worker-only process (/healthz, /metrics).\n', { status: 404 }),
        ),
        { ...cfg, port: options.port, host: options.host ?? '127.0.0.1' },
      );
    } catch (err) {
      await runtime.close();
      throw err;
    }
  }
  worker.start();
  const url = server ? `http://${options.host ?? '127.0.0.1'}:${server.port}` : null;
  log(
    `Flowport worker ${worker.owner} started. Store: ${storeDescription(cfg)}.${url ? ` Health and metrics: ${url}/healthz, ${url}/metrics.` : ''}`,
  );
  return {
    role: 'worker',
    url,
    runtime,
    async close() {
      await server?.close();
      await runtime.close();
    },
  };
}

/** Resolves once SIGINT or SIGTERM arrived and the process closed cleanly; returns the signal. */
export function closeOnSignal(proc: RunningProcess, log: Log = (l) => console.log(l)): Promise<string> {
  return new Promise((resolve, reject) => {
    let closing = false;
    const stop = (signal: string) => {
      if (closing) return;
      closing = true;
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      log(`${signal}: shutting down (finishing deliveries in flight)`);
      proc.close().then(() => resolve(signal), reject);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
}

/** `npm start`: serve until a signal. A failed start prints one line (startup-failure.ts) and exits 1. */
export async function main(): Promise<void> {
  let config: Config | null = null;
  let proc: RunningProcess;
  try {
    config = loadConfig();
    proc = await startServe(config);
  } catch (err) {
    console.error(startupFailureLine(err, config?.publicUrl ?? 'http://localhost:8787'));
    process.exit(1);
  }
  await closeOnSignal(proc);
  process.exit(0);
}

if (import.meta.main) await main();
