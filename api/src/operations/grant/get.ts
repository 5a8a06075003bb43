// GET /agent/v1/grant — the calling grant's own facts: shop, tier, scopes,
// actor, expiry and current usage. Never the token (only its last 4 characters).
import { z } from '@hono/zod-openapi';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { Timestamp } from '../read-schemas.ts';
import { readGrant } from '../../reads/grant.ts';

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
    name: 'get_grant',
    title: 'Read my grant',
    description:
      'Check what this grant allows before acting: its scopes, tier, expiry and who it belongs to. Use it when a refusal names a missing scope.',
  },
  cli: ['get-grant'],
  run: async ({ ctx }) => readGrant({ ctx }),
});
