// GET /agent/v1/grant — the calling grant's own facts: shop, tier, scopes,
// actor, expiry and current usage. Never the token (only its last 4 characters).
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { ScopeFacts, Timestamp, nullableText, wholeNumber } from '../read-schemas.ts';
import { readGrant } from '../../reads/grant.ts';

export const GrantFacts = z
  .object({
    id: z
      .string()
      .openapi({ example: 'grt_01jd0000000000000000000000', description: 'Grant id (`grt_…`); not secret.' }),
    shop_id: z.string().describe('Id of the shop the grant acts for; it can only see this shop.'),
    shop_domain: z.string().describe("The shop's myshopify.com domain (e.g. `example.myshopify.com`)."),
    status: z
      .enum(['active'])
      .describe('Always `active` here: expired or revoked grants are refused before this read.'),
    tier: z.string().describe('Tier the grant was issued with (a named bundle of scopes).'),
    tier_description: z.string().describe('What the tier allows, in one sentence.'),
    scopes: z.array(ScopeFacts).describe('Every scope the grant holds.'),
    actor: z
      .object({
        kind: z.enum(['agent', 'human']).describe('Whether the grant is for an AI agent or a person.'),
        name: z.string().describe('Name given when the grant was issued; shown in the audit log.'),
        client: nullableText('MCP or HTTP client the grant was issued for, as given at issue; null when not given.'),
      })
      .describe('Who uses the grant, as recorded in the audit log.'),
    token_hint: z.string().describe('`fpg_…` plus the last 4 characters. The token itself is never shown again.'),
    created_at: Timestamp.describe('When the grant was issued (ISO 8601, UTC).'),
    expires_at: Timestamp.describe('When the grant stops working (ISO 8601, UTC).'),
    expires_in_s: wholeNumber('Seconds until `expires_at`.'),
    last_used_at: Timestamp.nullable().describe('When the grant last made a call; null if never.'),
    use_count: wholeNumber('Number of calls the grant has made.'),
    usage: z
      .object({
        requests_this_minute: wholeNumber('Calls this grant made in the current rate-limit minute.'),
        rate_limit_per_minute: wholeNumber('Calls per minute allowed to this grant.'),
        window_resets_at: Timestamp.describe('When the current rate-limit minute ends.'),
        plan_usage_url: z.string().describe("URL of the plan usage read (the shop's meters and caps)."),
      })
      .describe("This grant's rate-limit usage right now."),
    how_to_change: z
      .string()
      .describe('How to get more scopes or a longer expiry (grants are changed by issuing a new one).'),
    docs_url: z.string().describe('Docs page about grants.'),
  })
  .openapi('GrantFacts');

export const getGrant = defineRead({
  name: 'get_grant',
  path: '/grant',
  summary: 'Read your own grant',
  description:
    "The calling grant's facts: shop, tier, scopes, actor, expiry, last use and this minute's request count. Counted as a simple read but never blocked by a plan cap.",
  family: 'account',
  scope: 'grant:read',
  meter: 'simple_read',
  response: GrantFacts,
  mcp: {
    title: 'Read my grant',
    description:
      'Check what this grant allows before acting: its scopes, tier, expiry and who it belongs to. Use it when a refusal names a missing scope.',
  },
  run: async ({ ctx }) => readGrant({ ctx }),
});
