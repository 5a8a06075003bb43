// Starts a real Flowport runtime for a test: its own temp data dir, a real
// SQLite file (or, with FLOWPORT_TEST_STORE=postgres, a fresh PostgreSQL schema
// dropped at close), real HTTP on a loopback port, the in-process sandbox and worker.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type ServerOptions } from 'node:http';
import { installClientErrorHandler } from '../../api/src/http/client-error.ts';
import { installExpectContinue } from '../../api/src/http/expect-continue.ts';
import { httpServerOptions } from '../../api/src/http/request-timeout.ts';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, loadConfig } from '../../api/src/config.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { createRuntime, type Runtime } from '../../api/src/runtime.ts';
import { recordServedPublicUrl } from '../../api/src/services/served-url.ts';
import { ensureSandbox, type SandboxCredentials } from '../../api/src/sandbox/bootstrap.ts';
import { freshTestStore } from './store.ts';

export interface TestServer {
  url: string;
  port: number;
  runtime: Runtime;
  dataDir: string;
  /** The Postgres URL this server's store lives at (null: SQLite in dataDir). */
  databaseUrl: string | null;
  /** Env that points a CLI run or a child process at this server's store (data dir, and database URL on Postgres). */
  storeEnv: Record<string, string>;
  sandbox: SandboxCredentials | null;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  /** Create the sandbox shop, endpoint and grant (default true in sandbox mode). */
  bootstrapSandbox?: boolean;
  worker?: boolean;
  configure?: (config: Config) => Config;
  /** Serve this operation list instead of the registry (e.g. the registry plus a test-only operation). */
  operations?: readonly AnyOperation[];
  /**
   * `suite` (default): the suite's store (FLOWPORT_TEST_STORE). `sqlite`: always a SQLite file,
   * for a test about SQLite itself (it then runs the same on both suite runs).
   */
  store?: 'suite' | 'sqlite';
  /** Where the runtime's structured log lines go (a test capturing them); default stdout. */
  logDestination?: NonNullable<Parameters<typeof createRuntime>[1]>['logDestination'];
  /** The runtime's clock (default Date.now), e.g. a clock a recording advances by hand. */
  now?: () => number;
}

export function tempDir(prefix = 'flowport-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = tempDir();
  // A test that names its own database keeps it; otherwise the suite's store decides.
  const store =
    options.env?.FLOWPORT_DATABASE_URL || options.store === 'sqlite'
      ? { env: {}, databaseUrl: options.env?.FLOWPORT_DATABASE_URL ?? null, drop: async () => {} }
      : await freshTestStore();
  // Listen first on port 0 so the config (public URL, sandbox URL) knows the real port.
  // The server answers with the runtime's Node listener (intake fast path, then the app), as
  // `flowport serve` does.
  const holder: { listener: RequestListener } = {
    listener: (_req, res) => {
      res.writeHead(503).end('starting');
    },
  };
  // The request timeout is fixed when the server starts listening, before the full config (it
  // needs the port) is loaded: it comes from options.env alone.
  let timeouts: ServerOptions;
  try {
    timeouts = httpServerOptions(loadConfig({ ...store.env, ...options.env }));
  } catch (err) {
    await store.drop();
    throw err;
  }
  const server = createServer(timeouts, (req, res) => holder.listener(req, res));
  server.listen(0, '127.0.0.1');
  // Outlive the client's idle-socket timeout (undici: 4 s): on a loaded machine an event-loop
  // stall lets the server's keep-alive timer fire before it reads a request already sent on a
  // reused socket, and the client sees ECONNRESET.
  (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  let config = loadConfig({
    FLOWPORT_DATA_DIR: dataDir,
    PORT: String(port),
    FLOWPORT_PUBLIC_URL: `http://127.0.0.1:${port}`,
    FLOWPORT_LOG_LEVEL: 'silent',
    ...(options.worker === false ? { FLOWPORT_WORKER: 'off' } : {}),
    ...store.env,
    ...options.env,
  });
  if (options.configure) config = options.configure(config);
  installClientErrorHandler(server, config.publicUrl);
  installExpectContinue(server, config);
  let runtime: Runtime;
  try {
    runtime = await createRuntime(config, {
      ...(options.operations ? { operations: options.operations } : {}),
      ...(options.logDestination ? { logDestination: options.logDestination } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  } catch (err) {
    server.close();
    await store.drop();
    throw err;
  }
  holder.listener = runtime.listener;
  // Every code an operation answers must be one its contract declares (issue 43): a report fails close().
  const undeclared: string[] = [];
  runtime.services.hooks.undeclaredError = (r) =>
    undeclared.push(`${r.operation_id} answered ${r.code} over ${r.transport}, which its contract does not declare`);
  // As `flowport serve` does once it listens: operator commands print ingest URLs from it.
  await recordServedPublicUrl(runtime.services.db, config.publicUrl, Date.now());
  let sandbox: SandboxCredentials | null = null;
  if (runtime.sandbox && options.bootstrapSandbox !== false) sandbox = (await ensureSandbox(runtime.services)).creds;
  runtime.worker?.start();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    runtime,
    dataDir,
    databaseUrl: store.databaseUrl,
    storeEnv: {
      FLOWPORT_DATA_DIR: dataDir,
      ...(store.databaseUrl ? { FLOWPORT_DATABASE_URL: store.databaseUrl } : {}),
    },
    sandbox,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      await closed;
      await runtime.close();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
      if (undeclared.length) throw new Error(`Undeclared error codes:\n${[...new Set(undeclared)].join('\n')}`);
    },
  };
}
