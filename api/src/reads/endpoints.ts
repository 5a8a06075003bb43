// Endpoint reads: configuration without secrets (the last 4 characters only),
// scoped to one shop. An endpoint of another shop reads as absent.
import { joinUrl } from '../docs-paths.ts';
import { INGEST_PATH_PREFIX } from '../lib/package-info.ts';
import type { OperationContext, Services } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import { AppError } from '../errors/problem.ts';
import {
  configFromSnake,
  configToSnake,
  type EndpointConfig,
  effectiveExternalId,
  endpointWarnings,
} from '../services/endpoints.ts';
import { isId } from '../ids.ts';
import { cursorPosition, listScope, pageOf } from './paging.ts';
import type { EndpointRow } from '../store/tables/endpoints.ts';
import { eventWindowSql, windowParams } from '../store/tables/events/window-counts.ts';
import { latestRefusals, refusalCounts, refusalCountsByEndpoint } from './receipts.ts';

/** The window of recent events by state that endpoint reads show. */
export const RECENT_WINDOW_HOURS = 24;

export type EndpointView = ReturnType<typeof endpointView>;

/** Non-secret config keys copied from config_json (allow-list: anything new stays hidden until listed). */
const SAFE_CONFIG_KEYS = ['hmac', 'static_header', 'basic', 'tolerance_sec', 'dedupe_window_hours', 'mapping'] as const;

/** The fields every view of an endpoint starts with (its read, an intent preview's snapshot). */
export function endpointIdentity(row: EndpointRow) {
  return {
    id: row.id,
    name: row.name,
    sender_label: row.sender_label,
    trigger_variant: row.trigger_variant,
    auth_mode: row.auth_mode,
  };
}

/** Until when the secret replaced by the last rotation is still accepted; null once it is not. */
export function previousSecretValidUntil(row: EndpointRow, now: number): string | null {
  const until = row.previous_secret_expires_at === null ? null : Number(row.previous_secret_expires_at);
  return until !== null && until > now ? new Date(until).toISOString() : null;
}

export function endpointView(row: EndpointRow, publicUrl: string, now: number) {
  const parsed = configFromSnake<EndpointConfig>(JSON.parse(row.config_json));
  // The external id as it applies (a mode without a preset id dedupes on nothing: `none`).
  const applied = parsed.mapping
    ? { ...parsed, mapping: { ...parsed.mapping, externalId: effectiveExternalId(parsed) } }
    : parsed;
  const cfg = configToSnake(applied);
  const config: Record<string, unknown> = {};
  for (const k of SAFE_CONFIG_KEYS) if (cfg[k] !== undefined) config[k] = cfg[k];
  const status = row.deleted_at ? 'deleted' : row.status;
  return {
    ...endpointIdentity(row),
    status: status as 'active' | 'paused' | 'archived' | 'deleted',
    config_version: Number(row.config_version),
    config,
    secret: {
      configured: row.secret_last4 !== null,
      last4: row.secret_last4,
      previous_secret_valid_until: previousSecretValidUntil(row, now),
    },
    ingest_url: joinUrl(publicUrl, `${INGEST_PATH_PREFIX}/${row.id}`),
    created_at: new Date(Number(row.created_at)).toISOString(),
    updated_at: new Date(Number(row.updated_at)).toISOString(),
    archived_at: row.archived_at === null ? null : new Date(Number(row.archived_at)).toISOString(),
    deleted_at: row.deleted_at === null ? null : new Date(Number(row.deleted_at)).toISOString(),
    warnings: parsed.mapping ? endpointWarnings(parsed) : [],
  };
}

export async function getShopEndpoint(
  services: Pick<Services, 'db'>,
  shopId: string,
  id: string,
): Promise<EndpointRow | undefined> {
  return services.db.get<EndpointRow>('SELECT * FROM endpoints WHERE id = ? AND shop_id = ?', [id, shopId]);
}

export async function listShopEndpoints(
  services: Pick<Services, 'db'>,
  shopId: string,
  filter: { status?: string; includeDeleted?: boolean; afterId?: string | null; limit?: number },
): Promise<EndpointRow[]> {
  const where = ['shop_id = ?'];
  const params: (string | number)[] = [shopId];
  if (!filter.includeDeleted && filter.status !== 'deleted') where.push('deleted_at IS NULL');
  if (filter.status === 'deleted') where.push('deleted_at IS NOT NULL');
  else if (filter.status) {
    where.push('status = ?');
    params.push(filter.status);
  }
  if (filter.afterId) {
    where.push('id > ?');
    params.push(filter.afterId);
  }
  const limit = filter.limit === undefined ? '' : ' LIMIT ?';
  if (filter.limit !== undefined) params.push(filter.limit);
  return services.db.all<EndpointRow>(
    `SELECT * FROM endpoints WHERE ${where.join(' AND ')} ORDER BY id${limit}`,
    params,
  );
}

/** The shop's events since a time by endpoint and state: its window's hourly counts and edge (ADR 0313). */
export const ENDPOINT_STATE_COUNTS_SQL = `SELECT endpoint_id, state, SUM(n) AS n FROM (${eventWindowSql(false)}) AS w
  GROUP BY endpoint_id, state HAVING SUM(n) > 0`;

/** One endpoint's events since a time by state, as ENDPOINT_STATE_COUNTS_SQL counts them. */
const ENDPOINT_STATES_SQL = `SELECT state, SUM(n) AS n FROM (${eventWindowSql(true)}) AS w GROUP BY state HAVING SUM(n) > 0`;

/** Per-endpoint event counts by state over the last `windowMs` (one grouped query). */
export async function endpointStateCounts(
  services: Pick<Services, 'db'>,
  shopId: string,
  since: number,
): Promise<Map<string, Record<string, number>>> {
  const rows = await services.db.all<{ endpoint_id: string; state: string; n: number }>(
    ENDPOINT_STATE_COUNTS_SQL,
    windowParams(shopId, since),
  );
  const out = new Map<string, Record<string, number>>();
  for (const r of rows) {
    const m = out.get(r.endpoint_id) ?? {};
    m[r.state] = Number(r.n);
    out.set(r.endpoint_id, m);
  }
  return out;
}

/** One endpoint of the caller's shop with its recent events by state (getEndpoint). */
export async function readEndpoint({ ctx, input }: { ctx: OperationContext; input: { endpoint_id: string } }) {
  const p = ctx.principal;
  const now = ctx.services.now();
  const row = await getShopEndpoint(ctx.services, p.shopId, input.endpoint_id);
  if (!row) throw new AppError('not_found', { detail: `No endpoint ${input.endpoint_id} in this shop.` });
  const since = now - RECENT_WINDOW_HOURS * 3_600_000;
  const [rows, refused] = await Promise.all([
    ctx.services.db.all<{ state: string; n: number }>(ENDPOINT_STATES_SQL, windowParams(p.shopId, since, row.id)),
    refusalCountsByEndpoint(ctx.services.db, p.shopId, since, row.id),
  ]);
  const latest = await latestRefusals(ctx.services.db, p.shopId, since, refused.has(row.id) ? [row.id] : []);
  return {
    ...endpointView(row, ctx.services.config.publicUrl, now),
    recent: {
      window_hours: RECENT_WINDOW_HOURS,
      by_state: Object.fromEntries(rows.map((r) => [r.state, Number(r.n)])),
      refused: { ...(refused.get(row.id) ?? refusalCounts({})), latest: latest.get(row.id) ?? null },
    },
  };
}

/** The shop's endpoints with their recent events by state (listEndpoints). */
export async function listEndpointViews({
  ctx,
  input,
}: {
  ctx: OperationContext;
  input: { status?: 'active' | 'paused' | 'archived' | 'deleted'; limit: number; cursor?: string };
}) {
  const p = ctx.principal;
  const now = ctx.services.now();
  // The one list shape (ADR 0013): keyset on the endpoint id, in creation order.
  const scope = listScope('endpoints', p.shopId);
  const afterId = cursorPosition(ctx.services.secrets, scope, input.cursor, (id) => isId('endpoint', id));
  const fetched = await listShopEndpoints(ctx.services, p.shopId, {
    status: input.status,
    afterId,
    limit: input.limit + 1,
  });
  const { rows, page } = pageOf(ctx.services.secrets, scope, fetched, input.limit, (r) => r.id);
  const since = now - RECENT_WINDOW_HOURS * 3_600_000;
  const [counts, refused] = await Promise.all([
    endpointStateCounts(ctx.services, p.shopId, since),
    refusalCountsByEndpoint(ctx.services.db, p.shopId, since),
  ]);
  // The newest refusal of each endpoint on the page that has any: what refused it, and the hint.
  const latest = await latestRefusals(
    ctx.services.db,
    p.shopId,
    since,
    rows.filter((r) => refused.has(r.id)).map((r) => r.id),
  );
  return {
    data: rows.map((r) => ({
      ...endpointView(r, ctx.services.config.publicUrl, now),
      recent: {
        window_hours: RECENT_WINDOW_HOURS,
        by_state: counts.get(r.id) ?? {},
        refused: { ...(refused.get(r.id) ?? refusalCounts({})), latest: latest.get(r.id) ?? null },
      },
    })),
    page,
  };
}

// intake: an endpoint with its shop's plan, the facts intake caches per endpoint.

/** An endpoint row (deleted ones included) with its shop's plan id, or undefined when there is none. */
export async function findEndpointWithPlan(
  db: Db,
  endpointId: string,
): Promise<(EndpointRow & { shop_plan: string }) | undefined> {
  return db.get<EndpointRow & { shop_plan: string }>(
    'SELECT e.*, s.plan AS shop_plan FROM endpoints e JOIN shops s ON s.id = e.shop_id WHERE e.id = ?',
    [endpointId],
  );
}
