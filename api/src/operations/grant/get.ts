// GET /agent/v1/grant — the calling grant's own facts: shop, tier, scopes,
// actor, expiry and current usage. Never the token (only its last 4 characters).
import { z } from '@hono/zod-openapi';
import { SCOPE_DESCRIPTIONS, type Scope, TIER_DESCRIPTIONS, type Tier } from '../../auth/scopes.ts';
import { DOCS_PATHS, joinUrl } from '../../docs-paths.ts';
import { AppError } from '../../errors/problem.ts';
import type { GrantRow } from '../../auth/grants.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { limitsForShop } from '../../usage/meters.ts';
import { grantRateKey, peekRate, RATE_WINDOW_MS, windowStart } from '../../usage/rate-limit.ts';
import { defineOperation } from '../../core/types.ts';
import { isoReq, iso, Timestamp } from '../read-schemas.ts';

export const GrantFacts = z
  .object({
    id: z.string().openapi({ example: 'grt_01jd0000000000000000000000' }),
    shop_id: z.string(),
    status: z
      .enum(['active'])
      .describe('Always `active` here: expired or revoked grants are refused before this read.'),
    tier: z.string(),
    tier_description: z.string(),
    scopes: z.array(z.object({ scope: z.string(), description: z.string() })),
    actor: z.object({ kind: z.enum(['agent', 'human']), name: z.string(), client: z.string().nullable() }),
    token_hint: z.string().describe('`fpg_…` plus the last 4 characters. The token itself is never shown again.'),
    created_at: Timestamp,
    expires_at: Timestamp,
    expires_in_s: z.number().int(),
    last_used_at: Timestamp.nullable(),
    use_count: z.number().int(),
    usage: z.object({
      requests_this_minute: z.number().int(),
      rate_limit_per_minute: z.number().int(),
      window_resets_at: Timestamp,
      plan_usage_url: z.string(),
    }),
    how_to_change: z.string(),
    docs_url: z.string(),
  })
  .openapi('GrantFacts');

export const getGrant = defineOperation({
  operationId: 'getGrant',
  method: 'get',
  path: `${AGENT_API_PREFIX}/grant`,
  summary: 'Read your own grant',
  description:
    "The calling grant's facts: shop, tier, scopes, actor, expiry, last use and this minute's request count. Counted as a simple read but never blocked by a plan cap.",
  family: 'account',
  kind: 'read',
  scope: 'grant:read',
  meter: 'simple_read',
  request: {},
  response: GrantFacts,
  errors: [],
  mcp: {
    name: 'read_grant',
    title: 'Read my grant',
    description:
      'Check what this grant allows before acting: its scopes, tier, expiry and who it belongs to. Use it when a refusal names a missing scope.',
  },
  cli: ['grant'],
  async run({ ctx }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const { db, config } = ctx.services;
    const row = await db.get<GrantRow>('SELECT * FROM grants WHERE id = ?', [p.grantId]);
    if (!row) throw new AppError('not_found');
    const now = ctx.services.now();
    const limits = await limitsForShop(db, p.shopId);
    const scopes = JSON.parse(row.scopes_json) as string[];
    return {
      id: row.id,
      shop_id: row.shop_id,
      status: 'active' as const,
      tier: row.tier,
      tier_description: TIER_DESCRIPTIONS[row.tier as Tier] ?? 'Custom scope set.',
      scopes: scopes.map((s) => ({ scope: s, description: SCOPE_DESCRIPTIONS[s as Scope] ?? s })),
      actor: { kind: row.actor_kind, name: row.actor_name, client: row.actor_client },
      token_hint: row.token_hint,
      created_at: isoReq(row.created_at),
      expires_at: isoReq(row.expires_at),
      expires_in_s: Math.max(0, Math.floor((Number(row.expires_at) - now) / 1000)),
      last_used_at: iso(row.last_used_at),
      use_count: Number(row.use_count),
      usage: {
        requests_this_minute: await peekRate(db, grantRateKey(row.id), now),
        rate_limit_per_minute: limits.ratePerMinute.perGrant,
        window_resets_at: isoReq(windowStart(now) + RATE_WINDOW_MS),
        plan_usage_url: joinUrl(config.publicUrl, `${AGENT_API_PREFIX}/plan-usage`),
      },
      how_to_change:
        'Grants cannot be widened or extended through the API or MCP. Ask the merchant to run `flowport grants create` for a new grant with the scopes you need.',
      docs_url: joinUrl(config.publicUrl, DOCS_PATHS.grantsAndScopes),
    };
  },
});
