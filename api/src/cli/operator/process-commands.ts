// Operator commands that run Flowport processes and manage their store: `flowport serve
// [--no-worker]`, `flowport worker`, `flowport migrate`, `flowport migrate-data`. Definitions
// only (the CLI, its help and the reference page derive from them); handlers are in
// ./process.ts. Each sets `store: false`: it opens its own store, and serve/worker
// run until SIGINT/SIGTERM.
import type { OperatorCommand } from '../definitions.ts';

export const PROCESS_OPERATOR_COMMANDS: OperatorCommand[] = [
  {
    command: ['serve'],
    summary:
      'Run the HTTP API (docs, Agent Operations API, MCP, sender intake) with the delivery worker, until Ctrl-C or SIGTERM.',
    options: [
      {
        flag: '--no-worker',
        description:
          'API only: run no delivery worker here (run `npx flowport worker` processes on the same database).',
      },
      { flag: '--port <port>', description: 'Port to listen on (default PORT or 8787).' },
      {
        flag: '--data-dir <dir>',
        description: 'Data directory (default ./data, or FLOWPORT_DATA_DIR).',
      },
    ],
    store: false,
  },
  {
    command: ['worker'],
    summary: 'Run only the delivery worker (no API, no intake) against the configured store, until Ctrl-C or SIGTERM.',
    options: [
      { flag: '--port <port>', description: 'Answer /healthz and /metrics on this port (default: no port).' },
      { flag: '--host <host>', description: 'Interface for --port (default 127.0.0.1).' },
      {
        flag: '--data-dir <dir>',
        description: 'Data directory (default ./data, or FLOWPORT_DATA_DIR).',
      },
    ],
    store: false,
  },
  {
    command: ['migrate'],
    summary: 'Apply pending store migrations to the configured store (SQLite or FLOWPORT_DATABASE_URL) and exit.',
    options: [
      {
        flag: '--data-dir <dir>',
        description: 'Data directory (default ./data, or FLOWPORT_DATA_DIR).',
      },
    ],
    store: false,
  },
  {
    command: ['migrate-data'],
    summary:
      'Copy a SQLite store into an empty PostgreSQL database in one transaction, then verify counts, the audit chain and the secret key. Stop Flowport first.',
    options: [
      {
        flag: '--from <file>',
        description: 'The SQLite store to copy (default `<data dir>/flowport.db`).',
      },
      {
        flag: '--to <url>',
        description:
          'The PostgreSQL URL to copy into (default FLOWPORT_DATABASE_URL; prefer the variable so a password stays out of shell history).',
      },
      {
        flag: '--data-dir <dir>',
        description: 'Data directory (default ./data, or FLOWPORT_DATA_DIR).',
      },
    ],
    store: false,
  },
];
