// Operator CLI for the sandbox's Shopify side of the app install (ADR 1200), against a running
// Flowport in sandbox mode: `flowport sandbox workflows enable|disable --shop … --trigger …`
// (a sandbox workflow using the trigger is turned on or off; Flow's lifecycle callback follows)
// and `flowport sandbox uninstall --shop …` (the app is uninstalled there; app/uninstalled follows).
import type { OperatorCommand } from '../definitions.ts';
import { CLI_ENV, DEFAULT_PORT } from '../../config.ts';
import type { StandaloneHandler } from '../handlers.ts';
import { AppError } from '../../errors/problem.ts';
import { SANDBOX_MOUNT_PATH } from '../../sandbox/app.ts';

// As the CLI's DEFAULT_BASE_URL (not imported: definitions.ts imports this file).
const DEFAULT_BASE_URL = `http://localhost:${DEFAULT_PORT}`;

const TARGET_OPTIONS = [
  { flag: '--shop <domain>', description: 'The sandbox store (its myshopify.com domain).', required: true },
  {
    flag: '--url <baseUrl>',
    description: `The running Flowport (sandbox mode, on this machine). Default: ${CLI_ENV.baseUrl} or ${DEFAULT_BASE_URL}.`,
  },
];

const WORKFLOW_OPTIONS = [
  ...TARGET_OPTIONS,
  { flag: '--trigger <handle>', description: 'The Flow trigger handle, e.g. external-event.', required: true },
  {
    flag: '--timestamp <iso>',
    description: "The lifecycle callback's timestamp (default now); an older one than Flowport has is ignored.",
  },
];

export const SANDBOX_INSTALL_COMMANDS: OperatorCommand[] = [
  {
    command: ['sandbox', 'workflows', 'enable'],
    summary:
      "Turn on a sandbox workflow that uses a trigger: the sandbox sends Flow's signed lifecycle callback (has_enabled_flow: true) to the running Flowport.",
    options: WORKFLOW_OPTIONS,
    store: false,
  },
  {
    command: ['sandbox', 'workflows', 'disable'],
    summary:
      "Turn off the sandbox workflow of a trigger: the sandbox sends Flow's signed lifecycle callback (has_enabled_flow: false); the trigger's events then end no_workflow without a call.",
    options: WORKFLOW_OPTIONS,
    store: false,
  },
  {
    command: ['sandbox', 'uninstall'],
    summary:
      'Uninstall the app from a sandbox store: its token stops working and the sandbox sends a signed app/uninstalled webhook to the running Flowport.',
    options: TARGET_OPTIONS,
    store: false,
  },
];

function baseOf(options: Record<string, unknown>, env: Record<string, string | undefined>): string {
  const raw = typeof options.url === 'string' ? options.url : (env[CLI_ENV.baseUrl] ?? DEFAULT_BASE_URL);
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
