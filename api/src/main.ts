// Process entry: load config, assemble the runtime, listen, bootstrap the sandbox.
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { isSandbox, loadConfig } from './config.ts';
import { createRuntime } from './runtime.ts';
import { ensureSandbox, SANDBOX_CREDENTIALS_FILE, sandboxBanner } from './sandbox/bootstrap.ts';

export async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = await createRuntime(config);
  const server = serve({ fetch: runtime.app.fetch, port: config.port, hostname: config.host });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  if (isSandbox(config)) {
    const { creds } = await ensureSandbox(runtime.services);
    console.log(sandboxBanner(creds, config.publicUrl, join(config.dataDir, SANDBOX_CREDENTIALS_FILE)));
  } else {
    console.log(`Flowport listening on ${config.publicUrl}`);
  }
  runtime.worker?.start();

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    console.log(`\n${signal}: shutting down`);
    server.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

if (import.meta.main) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
