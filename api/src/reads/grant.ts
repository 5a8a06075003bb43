// The calling grant's own facts (getGrant): shop (id and domain), tier, scopes, actor, expiry and usage.
import { SCOPE_DESCRIPTIONS, type Scope, TIER_DESCRIPTIONS, type Tier } from '../auth/scopes.ts';
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { AppError } from '../errors/problem.ts';
import type { GrantRow } from '../store/tables/grants.ts';
import { AGENT_API_PREFIX } from '../lib/package-info.ts';
import { ASK_FOR_A_GRANT } from '../entry-points.ts';
import { callerLimits } from '../usage/meters.ts';
import { grantRateKey, peekRate, RATE_WINDOW_MS, windowStart } from '../usage/rate-limit.ts';
import { unflushedGrantUse } from '../usage/ledger.ts';
import type { OperationContext } from '../core/types.ts';
import { iso, isoReq } from './shared.ts';

/** The calling grant's own facts and current usage; never the token (getGrant). */
export async function readGrant({ ctx }: { ctx: OperationContext }) {
  const p = ctx.principal;
  const { db, config } = ctx.services;
  const now = ctx.services.now();
  // Independent reads, at once (on PostgreSQL each is a round trip; ADR 0602).
  const [row, limits, requestsThisMinute] = await Promise.all([
    db.get<GrantRow & { shop_domain: string }>(
      'SELECT g.*, s.domain AS shop_domain FROM grants g JOIN shops s ON s.id = g.shop_id WHERE g.id = ?',
      [p.grantId],
    ),
    callerLimits(db, p),
    peekRate(db, grantRateKey(p.grantId), now),
  ]);
  if (!row) throw new AppError('not_found');
  const scopes = JSON.parse(row.scopes_json) as string[];
  const pending = unflushedGrantUse(db, row.id);
  return {
    id: row.id,
    shop_id: row.shop_id,
    shop_domain: row.shop_domain,
    status: 'active' as const,
    tier: row.tier,
    tier_description: TIER_DESCRIPTIONS[row.tier as Tier] ?? 'Custom scope set.',
    scopes: scopes.map((s) => ({ scope: s, description: SCOPE_DESCRIPTIONS[s as Scope] ?? s })),
    actor: { kind: row.actor_kind, name: row.actor_name, client: row.actor_client },
    token_hint: row.token_hint,
    created_at: isoReq(row.created_at),
    expires_at: isoReq(row.expires_at),
    expires_in_s: Math.max(0, Math.floor((Number(row.expires_at) - now) / 1000)),
    // With the uses this process counted and has not added to the store yet (ADR 0310).
    last_used_at: iso(pending ? Math.max(pending.last, Number(row.last_used_at ?? 0)) : row.last_used_at),
    use_count: Number(row.use_count) + (pending?.n ?? 0),
    usage: {
      requests_this_minute: requestsThisMinute,
      rate_limit_per_minute: limits.ratePerMinute.perGrant,
      window_resets_at: isoReq(windowStart(now) + RATE_WINDOW_MS),
      plan_usage_url: joinUrl(config.publicUrl, `${AGENT_API_PREFIX}/plan-usage`),
    },
    how_to_change: `Grants cannot be widened or extended through the API or MCP. ${ASK_FOR_A_GRANT}: a new grant with the scopes you need.`,
    docs_url: joinUrl(config.publicUrl, DOCS_PATHS.grantsAndScopes),
  };
}
