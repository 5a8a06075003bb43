// Shopify Flow's trigger lifecycle callback (the `flow_trigger_lifecycle_callback` extension's
// URL): Flow tells the app, per store and trigger, whether an enabled workflow uses the trigger.
// Flowport keeps the newest signal per shop domain and trigger handle; the worker skips the call
// to Shopify for a trigger no enabled workflow uses (ADR 1200). Flow stops the merchant from
// enabling a workflow when this answer fails or is slow, so it is one upsert and a 200.
import { Hono } from 'hono';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from '../http/types.ts';
import { SenderGoneError } from '../intake/intake.ts';
import { readBodyCapped } from '../http/intake-routes.ts';
import type { Services } from '../core/types.ts';
import { type FlowLifecycleSignal, recordLifecycleSignal, triggerHandleOf } from '../handoff/flow-readiness.ts';
import { SHOPIFY_APP_PATHS, shopifyAppCredentials, webhookBodyVerified } from '../lib/shopify-app.ts';

/** The largest lifecycle body read (Flow's is a few hundred bytes). */
const MAX_LIFECYCLE_BYTES = 16 * 1024;

/**
 * How far ahead of this server's clock a signal's timestamp may be. The newest signal wins, so one
 * dated far ahead (signed, e.g. year 9999) would win over every real one after it (ADR 1210).
 */
export const LIFECYCLE_FUTURE_TOLERANCE_MS = 5 * 60_000;

function parseSignal(raw: Uint8Array, now: number): FlowLifecycleSignal {
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
  if (signalAt > now + LIFECYCLE_FUTURE_TOLERANCE_MS)
    throw new AppError('shopify_lifecycle_timestamp_future', {
      detail: `The signal is dated ${new Date(Math.min(signalAt, 8.64e15)).toISOString()}, more than ${LIFECYCLE_FUTURE_TOLERANCE_MS / 60_000} minutes after this server's clock.`,
    });
  return {
    shopDomain: domain.trim().toLowerCase(),
    handle: triggerHandleOf(handle),
    hasEnabledFlow: enabled,
    signalAt,
  };
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
    const now = services.now();
    const signal = parseSignal(raw, now);
    const applied = await recordLifecycleSignal(services.db, signal, now);
    return c.json({ ok: true, applied });
  });
  return app;
}
