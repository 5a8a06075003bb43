// The Shopify sandbox on its own port (`flowport sandbox --port N`, or
// `node api/src/sandbox/server.ts --port N`), so tests can stop and kill it
// independently of Flowport. Same routes as in-process, under /sandbox/shopify.
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createSandboxState, SANDBOX_MOUNT_PATH, type SandboxOptions, type SandboxState, sandboxApp } from './app.ts';

export interface SandboxServer {
  /** Origin, e.g. http://127.0.0.1:4100 */
  url: string;
  /** Admin base URL for a shop domain: what shops.admin_base_url should hold. */
  adminBaseUrl(shopDomain: string): string;
  port: number;
  state: SandboxState;
  close(): Promise<void>;
}

export async function startSandboxServer(
  options: { port?: number; host?: string; state?: SandboxState } & SandboxOptions = {},
): Promise<SandboxServer> {
  const state = options.state ?? createSandboxState(options);
  const app = new Hono();
  // The same loopback guard as the stand-in mounted in Flowport: bound to loopback is not enough
  // against DNS rebinding or a cross-site POST from a page in the developer's browser.
  app.route(
    SANDBOX_MOUNT_PATH,
    sandboxApp(state, {
      refuseRemote: ({ reason, detail }) =>
        Response.json({ error: `Refused (${reason}). ${detail}` }, { status: reason === 'media' ? 415 : 404 }),
    }),
  );
  app.get('/healthz', (c) => c.json({ status: 'ok', sandbox: true }));
  const host = options.host ?? '127.0.0.1';
  const server = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  return {
    url,
    port,
    state,
    adminBaseUrl: (shopDomain) => `${url}${SANDBOX_MOUNT_PATH}/${shopDomain}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

/** Runs until SIGINT/SIGTERM; prints one line (and, with json, a JSON line) with the URL. */
export async function runSandboxProcess(argv: string[], out: (line: string) => void = console.log): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string' }, host: { type: 'string' } },
    strict: false,
  });
  const port = typeof values.port === 'string' ? Number(values.port) : 4100;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0–65535, got ${values.port}`);
  // A process of its own: its record does not share Flowport's memory, and benchmarks read back
  // every trigger of a long run (bench:handoff).
  const s = await startSandboxServer({
    port,
    host: typeof values.host === 'string' ? values.host : '127.0.0.1',
    maxRecorded: 100_000,
  });
  out(
    JSON.stringify({
      sandbox: s.url,
      triggers: `${s.url}${SANDBOX_MOUNT_PATH}/triggers`,
      faults: `${s.url}${SANDBOX_MOUNT_PATH}/_faults/<shop>`,
    }),
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await s.close();
}

if (import.meta.main) {
  runSandboxProcess(process.argv.slice(2)).catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
