// Shopify Flow's trigger lifecycle callback (the `flow_trigger_lifecycle_callback` extension's
// URL): Flow tells the app, per store and trigger, whether an enabled workflow uses the trigger.
// Flowport keeps the newest signal per shop domain and trigger handle; the worker skips the call
// to Shopify for a trigger no enabled workflow uses (ADR 1200). Flow stops the merchant from
// enabling a workflow when this answer fails or is slow, so it is one upsert and a 200.
import { Hono } from 'hono';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from '../http/types.ts';
import { SenderGoneError } from '../intake/intake.ts';
import { readBodyCapped } from '../intake/routes.ts';
import type { Services } from '../operations/types.ts';
import type { Db } from '../store/db.ts';
import { loadTriggerDefinitions } from '../handoff/triggers.ts';
import { SHOPIFY_APP_PATHS, shopifyAppCredentials, webhookBodyVerified } from './app.ts';

/** The largest lifecycle body read (Flow's is a few hundred bytes). */
const MAX_LIFECYCLE_BYTES = 16 * 1024;

export interface FlowLifecycleSignal {
  shopDomain: string;
  handle: string;
  hasEnabledFlow: boolean;
  /** The callback's own timestamp (ms); the newest one wins. */
  signalAt: number;
}

export type FlowReadiness = { enabled: 'yes' | 'no'; since: number } | { enabled: 'unknown'; since: null };

/** Stores a signal unless a newer one for the same shop and trigger is stored. Returns whether it was applied. */
export async function recordLifecycleSignal(db: Db, s: FlowLifecycleSignal, now: number): Promise<boolean> {
  const r = await db.run(
    `INSERT INTO flow_trigger_lifecycle (shop_domain, trigger_handle, has_enabled_flow, signal_at, received_at)
     VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (shop_domain, trigger_handle) DO UPDATE SET
       has_enabled_flow = excluded.has_enabled_flow, signal_at = excluded.signal_at, received_at = excluded.received_at
     WHERE flow_trigger_lifecycle.signal_at < excluded.signal_at`,
    [s.shopDomain, s.handle, s.hasEnabledFlow ? 1 : 0, s.signalAt, now],
  );
  return r.changes > 0;
}

/** Whether an enabled workflow uses the trigger in this shop, per Flow's newest signal. */
export async function flowReadiness(db: Db, shopDomain: string, handle: string): Promise<FlowReadiness> {
  const row = await db.get<{ has_enabled_flow: number; signal_at: number | string }>(
    'SELECT has_enabled_flow, signal_at FROM flow_trigger_lifecycle WHERE shop_domain = ? AND trigger_handle = ?',
    [shopDomain, handle],
  );
  if (!row) return { enabled: 'unknown', since: null };
  return { enabled: Number(row.has_enabled_flow) === 1 ? 'yes' : 'no', since: Number(row.signal_at) };
}

/** Every trigger's readiness in a shop, by handle (handles without a signal are absent). */
export async function flowReadinessByHandle(db: Db, shopDomain: string): Promise<Map<string, FlowReadiness>> {
  const rows = await db.all<{ trigger_handle: string; has_enabled_flow: number; signal_at: number | string }>(
    'SELECT trigger_handle, has_enabled_flow, signal_at FROM flow_trigger_lifecycle WHERE shop_domain = ?',
    [shopDomain],
  );
  return new Map(
    rows.map((r) => [
      r.trigger_handle,
      { enabled: Number(r.has_enabled_flow) === 1 ? 'yes' : 'no', since: Number(r.signal_at) } as FlowReadiness,
    ]),
  );
}

/** A sentence for one trigger's readiness (setup, diagnostics, receipts, the merchant page). */
export function describeReadiness(handle: string, r: FlowReadiness): string {
  if (r.enabled === 'unknown')
    return `Flow has not said yet whether an enabled workflow uses ${handle} (no lifecycle callback): Flowport calls Shopify for every event.`;
  const since = new Date(r.since).toISOString();
  return r.enabled === 'yes'
    ? `An enabled workflow uses ${handle} (Flow said so at ${since}).`
    : `No enabled workflow uses ${handle} (Flow said so at ${since}): its events end no_workflow without a call to Shopify. Turn on a workflow, then replay them.`;
}

function parseSignal(raw: Uint8Array): FlowLifecycleSignal {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(Buffer.from(raw).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new AppError('invalid_json', { detail: 'The lifecycle callback body is not valid JSON.' });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AppError('invalid_request', { detail: 'The lifecycle callback body must be a JSON object.' });
  const handle = body.flow_trigger_definition_id;
  const domain = body.shopify_domain;
  const enabled = body.has_enabled_flow;
  const ts = body.timestamp;
  const signalAt =
    typeof ts === 'number' ? (ts < 1e12 ? ts * 1000 : ts) : typeof ts === 'string' ? Date.parse(ts) : NaN;
  if (
    typeof handle !== 'string' ||
    handle.length === 0 ||
    handle.length > 200 ||
    typeof domain !== 'string' ||
    domain.length > 255 ||
    typeof enabled !== 'boolean' ||
    !Number.isFinite(signalAt)
  )
    throw new AppError('invalid_request', {
      detail:
        'The lifecycle callback needs flow_trigger_definition_id (string), shopify_domain (string), has_enabled_flow (boolean) and timestamp (ISO 8601).',
    });
  return {
    shopDomain: domain.trim().toLowerCase(),
    handle: triggerHandleOf(handle),
    hasEnabledFlow: enabled,
    signalAt,
  };
}

/**
 * The trigger handle a callback's flow_trigger_definition_id names. Shopify documents it as "the
 * unique identifier for your Flow trigger" with a trigger's name as the example ("Add row to
 * spreadsheet"), so both the extension's handle and its name are accepted (ADR 1200); anything
 * else is kept as sent (it then matches no trigger Flowport calls).
 */
export function triggerHandleOf(definitionId: string): string {
  const defs = loadTriggerDefinitions();
  const id = definitionId.trim();
  return (
    defs.find((d) => d.handle === id)?.handle ??
    defs.find((d) => d.name.toLowerCase() === id.toLowerCase())?.handle ??
    id
  );
}

export function flowLifecycleRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post(SHOPIFY_APP_PATHS.flowLifecycle, async (c) => {
    const services = getServices();
    let raw: Uint8Array;
    try {
      raw = await readBodyCapped(c.req.raw, MAX_LIFECYCLE_BYTES);
    } catch (err) {
      if (err instanceof SenderGoneError) return c.body(null, 400);
      throw err;
    }
    const app = shopifyAppCredentials(services.config);
    if (!app || !webhookBodyVerified(app.clientSecret, raw, c.req.header('x-shopify-hmac-sha256')))
      throw new AppError('shopify_webhook_unverified', {
        detail: app
          ? 'X-Shopify-Hmac-Sha256 is missing or does not match the HMAC-SHA256 of the body.'
          : 'No Shopify client secret is configured, so the lifecycle callback cannot be verified.',
      });
    const signal = parseSignal(raw);
    const applied = await recordLifecycleSignal(services.db, signal, services.now());
    return c.json({ ok: true, applied });
  });
  return app;
}
