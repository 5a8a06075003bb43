// Shared helpers for the handoff tests: shops/endpoints/events straight into the
// store (where intake is not the point), signed intake posts, and bounded waits.
import { createHash, createHmac } from 'node:crypto';
import type { Config } from '../../api/src/config.ts';
import { newId } from '../../api/src/ids.ts';
import type { Services } from '../../api/src/core/types.ts';
import type { Db } from '../../api/src/store/db.ts';
import type { FlowCallResult } from '../../api/src/handoff/flow-client.ts';
import { DEFAULT_HMAC, insertEndpoint, PLAIN_MAPPING } from '../../api/src/services/endpoints.ts';
import type { TriggerVariant } from '../../api/src/store/tables/endpoints.ts';
import { createShop } from '../../api/src/services/shops.ts';
import type { ShopRow } from '../../api/src/store/tables/shops.ts';
import { countStoredEvents } from '../../api/src/store/tables/events/window-counts.ts';

/** Polls until fn returns a truthy value; fails with `what` after `timeoutMs` (a bound, not a timing assertion). */
export async function waitFor<T>(
  fn: () => Promise<T> | T,
  what: string,
  timeoutMs = 60_000,
  everyMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function uniqueDomain(prefix = 'handoff'): string {
  return `${prefix}-${newId('shop').slice(-10)}.myshopify.com`;
}

export async function makeShop(
  services: Services,
  opts: { adminBaseUrl?: string | null; variant?: TriggerVariant; plan?: 'free' | 'starter' | 'growth' | 'scale' } = {},
): Promise<{ shop: ShopRow; endpointId: string }> {
  const shop = await createShop(services, {
    domain: uniqueDomain(),
    sandbox: true,
    plan: opts.plan,
    accessToken: `shpat_test_${newId('request').slice(-12)}`,
    adminBaseUrl: opts.adminBaseUrl ?? null,
  });
  const ep = await insertEndpoint(
    services,
    shop.id,
    {
      name: 'handoff test',
      senderLabel: 'tests',
      triggerVariant: opts.variant ?? 'external_event',
      authMode: 'hmac_sha256',
      hmac: DEFAULT_HMAC,
      mapping: PLAIN_MAPPING,
    },
    'fpsec_test_secret_for_handoff_tests',
  );
  return { shop, endpointId: ep.id };
}

/** Inserts a queued event directly (intake is not under test here). */
export async function insertEvent(
  services: Services,
  shopId: string,
  endpointId: string,
  opts: { body?: string; resourceId?: string | null; state?: string; receivedAt?: number } = {},
): Promise<string> {
  const id = newId('event');
  const body = opts.body ?? JSON.stringify({ type: 'test.event', n: id });
  const now = opts.receivedAt ?? services.now();
  await services.db.run(
    `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, event_type, sender, body, body_size, body_sha256, resource_id,
       config_version, received_at, updated_at, next_attempt_at)
     VALUES (?, ?, ?, ?, ?, 'test.event', 'tests', ?, ?, ?, ?, 1, ?, ?, ?)`,
    [
      id,
      shopId,
      endpointId,
      newId('receipt'),
      opts.state ?? 'queued',
      body,
      Buffer.byteLength(body),
      createHash('sha256').update(body).digest('hex'),
      opts.resourceId ?? null,
      now,
      now,
      now,
    ],
  );
  // Written directly: the window's counts are added as an insert path would (ADR 0313).
  await countStoredEvents(services.db, [id]);
  services.hooks.kickWorker?.();
  return id;
}

/**
 * Inserts `n` queued events of one shop in one statement (a recursive series, on either store),
 * due from `at` on, one a millisecond apart; their ids start with `evt_<tag>_`.
 */
export async function insertQueuedEvents(
  db: Db,
  shopId: string,
  endpointId: string,
  n: number,
  at: number,
  tag = 'bulk',
): Promise<void> {
  await db.run(
    `WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
     INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, event_type, sender, body, body_size, body_sha256,
       config_version, received_at, updated_at, next_attempt_at)
     SELECT 'evt_${tag}_' || CAST(n AS TEXT), ?, ?, 'rcp_${tag}_' || CAST(n AS TEXT), 'queued', 'test.event', 'tests',
       '{}', 2, 'x', 1, CAST(? AS BIGINT) + n, CAST(? AS BIGINT) + n, CAST(? AS BIGINT) + n FROM g`,
    [n, shopId, endpointId, at, at, at],
  );
  await countStoredEvents(
    db,
    Array.from({ length: n }, (_, i) => `evt_${tag}_${i + 1}`),
  );
}

export interface EventRow {
  id: string;
  state: string;
  support_code: string | null;
  error_code: string | null;
  attempt_count: number;
  body: string | null;
  body_sha256: string;
  body_size: number;
  retention_state: string;
  possible_duplicate_deliveries: number;
  delivered_at: number | null;
}

export async function eventRow(services: Services, id: string): Promise<EventRow> {
  const row = await services.db.get<EventRow>('SELECT * FROM events WHERE id = ?', [id]);
  if (!row) throw new Error(`no event ${id}`);
  return row;
}

export async function attemptsOf(services: Services, id: string) {
  return services.db.all<{
    trigger: string;
    outcome: string;
    http_status: number | null;
    error_code: string | null;
    flow_response: string | null;
    duration_ms: number | null;
    finished_at: number | null;
  }>('SELECT * FROM attempts WHERE event_id = ? ORDER BY id', [id]);
}

/** POSTs a signed body to the intake URL the way the sandbox banner's curl does. */
export async function postSigned(ingestUrl: string, secret: string, body: string): Promise<Response> {
  const sig = createHmac('sha256', secret).update(body).digest('hex');
  return fetch(ingestUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [DEFAULT_HMAC.header]: `${DEFAULT_HMAC.prefix}${sig}` },
    body,
  });
}

export const TERMINAL = new Set(['delivered', 'no_workflow', 'failed', 'duplicate_suppressed', 'rejected']);

/**
 * `startTestServer`'s `configure` for handoff tests: the worker polls every 20 ms, plus the
 * settings a test needs (retries, timeouts, lease, concurrency).
 */
export function workerSettings(settings: Partial<Config['worker']>): (c: Config) => Config {
  return (c) => ({ ...c, worker: { ...c.worker, pollIntervalMs: 20, ...settings } });
}

/** A Flow call's result as flow-client.ts reports it: a plain success unless `over` says otherwise. */
export function flowResult(over: Partial<FlowCallResult> = {}): FlowCallResult {
  return {
    httpStatus: 200,
    hasData: true,
    userErrors: [],
    errorCodes: [],
    throttled: false,
    throttleStatus: null,
    throttleWaitMs: 0,
    retryAfterMs: 0,
    transportError: null,
    mayHaveReachedShopify: false,
    durationMs: 1,
    summary: { http_status: 200 },
    ...over,
  };
}

/** Worker settings for pacing tests: small retry delays, so a THROTTLED event's retry is the bucket's to decide. */
export const PACING_WORKER_ENV = {
  FLOWPORT_RETRY_BASE_MS: '10',
  FLOWPORT_RETRY_CAP_MS: '50',
  FLOWPORT_RETRY_MAX_ATTEMPTS: '20',
};
