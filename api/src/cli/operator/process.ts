// Handlers of the process and store commands defined in ./process-commands.ts. Each
// opens (and closes) its own store, so none depends on the CLI runner's store; serve
// and worker run until SIGINT/SIGTERM. See content/operate/deployment.md.
import { resolve } from 'node:path';
import type { OptionValues, StandaloneHandler } from '../handlers.ts';
import { type Config, loadConfig } from '../../config.ts';
import { closeOnSignal, startServe, startWorker } from '../../main.ts';
import { migrateData } from '../../store/migrate-data.ts';
import { migrate, migrationFiles } from '../../store/migrate.ts';
import { openStore, SQLITE_FILE_NAME, storeKind } from '../../store/open.ts';
import { redactUrl } from '../../store/postgres.ts';

type ProcessContext = Parameters<StandaloneHandler>[0];
type ProcessHandler = StandaloneHandler;

function configFrom(ctx: ProcessContext, overrides: Record<string, string> = {}): Config {
  const env: Record<string, string | undefined> = { ...ctx.env, ...overrides };
  if (typeof ctx.options['data-dir'] === 'string') env.FLOWPORT_DATA_DIR = ctx.options['data-dir'];
  return loadConfig(env);
}

function port(value: OptionValues[string], flag: string): number | null {
  if (typeof value !== 'string') return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${flag} must be 0–65535, got "${value}".`);
  return n;
}

function say(ctx: ProcessContext): (line: string) => void {
  return (line) => ctx.io.out(line);
}

const serveCommand: ProcessHandler = async (ctx) => {
  const p = port(ctx.options.port, '--port');
  const config = configFrom(ctx, p === null ? {} : { PORT: String(p) });
  const proc = await startServe(config, {
    worker: ctx.options['no-worker'] !== true && config.worker.enabled,
    log: say(ctx),
  });
  const signal = await closeOnSignal(proc, say(ctx));
  return { json: { stopped: true, signal }, text: 'Flowport stopped.' };
};

const workerCommand: ProcessHandler = async (ctx) => {
  const config = configFrom(ctx);
  const host = typeof ctx.options.host === 'string' ? ctx.options.host : '127.0.0.1';
  const proc = await startWorker(config, { port: port(ctx.options.port, '--port'), host, log: say(ctx) });
  const signal = await closeOnSignal(proc, say(ctx));
  return { json: { stopped: true, signal }, text: 'Worker stopped.' };
};

const migrateCommand: ProcessHandler = async (ctx) => {
  const config = configFrom(ctx);
  const db = await openStore(config, { migrate: false, applicationName: 'flowport migrate' });
  try {
    const applied = await migrate(db);
    const store = storeKind(config) === 'postgres' ? redactUrl(config.databaseUrl as string) : config.dataDir;
    return {
      json: { store: storeKind(config), applied, schema_version: migrationFiles().at(-1) ?? null },
      text: applied.length
        ? `Applied ${applied.length} migration(s) to ${store}: ${applied.join(', ')}.`
        : `${store} is up to date (${migrationFiles().at(-1)}).`,
    };
  } finally {
    await db.close();
  }
};

const migrateDataCommand: ProcessHandler = async (ctx) => {
  const env = { ...ctx.env };
  const config = configFrom(ctx);
  const from =
    typeof ctx.options.from === 'string' ? resolve(ctx.options.from) : resolve(config.dataDir, SQLITE_FILE_NAME);
  const to = typeof ctx.options.to === 'string' ? ctx.options.to : config.databaseUrl;
  if (!to) throw new Error('Name the PostgreSQL database: --to <url> or FLOWPORT_DATABASE_URL.');
  const r = await migrateData({ from, to, env, log: ctx.options.json ? () => {} : say(ctx) });
  return {
    json: {
      from: r.from,
      to: r.to,
      tables: r.tables,
      total_rows: r.totalRows,
      audit_entries_verified: r.auditEntries,
      secret_key_source: r.secretKeySource,
    },
    text: [
      `Copied ${r.totalRows} row(s) in ${r.tables.length} tables from ${r.from} to ${r.to}; counts match; audit chain verified (${r.auditEntries} entries).`,
      `Run every Flowport process on it with FLOWPORT_DATABASE_URL and the same FLOWPORT_SECRET_KEY (${r.secretKeySource === 'FLOWPORT_SECRET_KEY' ? 'the one set now' : `the contents of the secret.key beside ${r.from}`}).`,
    ].join('\n'),
  };
};

export const PROCESS_OPERATOR_HANDLERS: Record<string, ProcessHandler> = {
  serve: serveCommand,
  worker: workerCommand,
  migrate: migrateCommand,
  'migrate-data': migrateDataCommand,
};
