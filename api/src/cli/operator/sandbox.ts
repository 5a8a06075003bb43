// Handlers of the sandbox's install-side operator commands (definitions: ./sandbox-commands.ts):
// each posts to the running Flowport's sandbox, which plays Shopify and calls Flowport back.
import { CLI_ENV } from '../../config.ts';
import { AppError } from '../../errors/problem.ts';
import { SANDBOX_MOUNT_PATH } from '../../lib/shopify-app.ts';
import type { StandaloneHandler } from '../handlers.ts';
import { localServerUrl } from '../../lib/served-url-file.ts';

function baseOf(options: Record<string, unknown>, env: Record<string, string | undefined>): string {
  const raw =
    typeof options.url === 'string'
      ? options.url
      : env[CLI_ENV.baseUrl]?.trim() || localServerUrl(env, process.cwd()).url;
  return raw.replace(/\/+$/, '');
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
  } catch (err) {
    throw new AppError('service_unavailable', {
      detail: `Could not reach the sandbox at ${url} (${(err as Error).message}). Is Flowport running in sandbox mode on this machine?`,
    });
  }
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok)
    throw new AppError('invalid_request', {
      detail: `The sandbox answered ${res.status}: ${String(json.error ?? json.detail ?? 'no detail')}`,
    });
  return json;
}

const workflows =
  (enabled: boolean): StandaloneHandler =>
  async ({ options, env }) => {
    const shop = String(options.shop);
    const trigger = String(options.trigger);
    const r = await post(`${baseOf(options, env)}${SANDBOX_MOUNT_PATH}/${encodeURIComponent(shop)}/flow/workflows`, {
      trigger,
      enabled,
      ...(typeof options.timestamp === 'string' ? { timestamp: options.timestamp } : {}),
    });
    const status = Number(r.flowport_status);
    return {
      json: r,
      text: `Sandbox workflow for ${trigger} on ${shop} ${enabled ? 'enabled' : 'disabled'}; Flowport answered the lifecycle callback with ${status || 'no answer'}.`,
      ...(status >= 200 && status < 300 ? {} : { exitCode: 1 }),
    };
  };

const uninstall: StandaloneHandler = async ({ options, env }) => {
  const shop = String(options.shop);
  const r = await post(
    `${baseOf(options, env)}${SANDBOX_MOUNT_PATH}/${encodeURIComponent(shop)}/admin/apps/flowport/uninstall`,
    undefined,
  );
  const status = Number(r.flowport_status);
  return {
    json: r,
    text: `Flowport uninstalled from ${shop} (sandbox); Flowport answered app/uninstalled with ${status || 'no answer'}.`,
    ...(status >= 200 && status < 300 ? {} : { exitCode: 1 }),
  };
};

export const SANDBOX_INSTALL_HANDLERS: Record<string, StandaloneHandler> = {
  'sandbox workflows enable': workflows(true),
  'sandbox workflows disable': workflows(false),
  'sandbox uninstall': uninstall,
};
