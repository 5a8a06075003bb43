// Operator CLI for the handoff: `flowport sandbox --port N` (the Shopify
// stand-in on its own port) and `flowport shops reconnect` (after a revoked
// token: store the new token, release held events). Human-only, local store.
import type { OperatorHandler, StandaloneHandler } from '../handlers.ts';
import { AppError } from '../../errors/problem.ts';
import { OPERATOR_ACTOR } from '../../audit/log.ts';
import { reconnectShop } from '../../handoff/lifecycle.ts';

const sandbox: StandaloneHandler = async ({ options, io }) => {
  const argv: string[] = [];
  if (typeof options.port === 'string') argv.push('--port', options.port);
  if (typeof options.host === 'string') argv.push('--host', options.host);
  // Loaded on use (it pulls in the HTTP server); runs until SIGINT/SIGTERM and the CLI runner awaits it.
  const { runSandboxProcess } = await import('../../sandbox/server.ts');
  await runSandboxProcess(argv, (line) => io.out(line));
  return { json: { stopped: true }, text: 'Sandbox stopped.' };
};

const reconnect: OperatorHandler = async ({ options, services, env }) => {
  const shopId = String(options.shop);
  let accessToken: string | undefined;
  if (typeof options['access-token-env'] === 'string') {
    accessToken = env[options['access-token-env']]?.trim();
    if (!accessToken)
      throw new AppError('invalid_request', {
        detail: `--access-token-env ${options['access-token-env']}: the variable is empty or unset.`,
      });
  }
  const r = await reconnectShop(services, shopId, {
    actor: OPERATOR_ACTOR,
    ...(accessToken ? { accessToken } : {}),
    ...(typeof options.domain === 'string' ? { domain: options.domain } : {}),
  });
  const moved = r.domain !== r.previousDomain;
  return {
    json: {
      shop_id: shopId,
      domain: r.domain,
      ...(moved ? { previous_domain: r.previousDomain } : {}),
      previous_connection_status: r.previousStatus,
      connection_status: 'connected',
      released_held_events: r.released,
    },
    text: `${moved ? `${r.previousDomain} is now ${r.domain}; ` : ''}${r.domain} is connected again; ${r.released} held event(s) queued for delivery.`,
  };
};

export const HANDOFF_OPERATOR_HANDLERS: Record<string, OperatorHandler> = {
  'shops reconnect': reconnect,
};

export const HANDOFF_STANDALONE_HANDLERS: Record<string, StandaloneHandler> = { sandbox };
