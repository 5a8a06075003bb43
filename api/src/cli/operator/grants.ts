// Handlers of the grants/audit operator commands (`grants create|list|revoke`, `audit verify`;
// defined in ./grants-commands.ts). Loaded only when one of them runs. Human-only: they run on
// the host against the local store and are never reachable through the API or MCP.
import { appendAudit, OPERATOR_ACTOR, verifyAuditChain, verifyShopAuditChain } from '../../audit/log.ts';
import type { OperatorHandler, OptionValues } from '../handlers.ts';
import { AppError } from '../../errors/problem.ts';
import { createGrant, getGrantRow, listGrants, MAX_GRANT_DAYS, revokeGrant } from '../../auth/grants.ts';
import type { GrantRow } from '../../store/tables/grants.ts';
import { getShop } from '../../services/shops.ts';
import { isScope, type Scope, TIERS, type Tier } from '../../auth/scopes.ts';

export function parseDuration(text: string): number {
  const m = /^(\d+)\s*(s|m|h|d)$/.exec(text.trim());
  if (!m)
    throw new AppError('invalid_request', { detail: `--expires-in must look like 30m, 12h or 7d, got "${text}".` });
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

const str = (o: OptionValues, k: string): string | undefined =>
  typeof o[k] === 'string' ? (o[k] as string) : undefined;

function grantStatus(g: GrantRow, now: number): string {
  if (g.revoked_at !== null) return 'revoked';
  return Number(g.expires_at) <= now ? 'expired' : 'active';
}

export const GRANTS_OPERATOR_HANDLERS: Record<string, OperatorHandler> = {
  async 'grants create'({ options, services }) {
    const shopId = str(options, 'shop') ?? '';
    const tier = str(options, 'tier') ?? '';
    if (!(TIERS as readonly string[]).includes(tier))
      throw new AppError('invalid_request', { detail: `Unknown tier "${tier}". Use one of: ${TIERS.join(', ')}.` });
    const kind = str(options, 'actor-kind');
    if (kind !== 'agent' && kind !== 'human')
      throw new AppError('invalid_request', { detail: '--actor-kind must be `agent` or `human`.' });
    const extra = (Array.isArray(options.scope) ? options.scope : []).filter(Boolean);
    const bad = extra.filter((s) => !isScope(s));
    if (bad.length)
      throw new AppError('invalid_request', {
        detail: `Unknown scope(s): ${bad.join(', ')}. See the manifest for the scope list.`,
      });
    const shop = await getShop(services, shopId);
    if (!shop)
      throw new AppError('not_found', {
        detail: `No shop ${shopId} in this store. List shops with \`npx flowport shops list\`.`,
      });
    const expiresInMs = parseDuration(str(options, 'expires-in') ?? '30d');
    if (expiresInMs < 1_000 || expiresInMs > MAX_GRANT_DAYS * 86_400_000)
      throw new AppError('invalid_request', {
        detail: `--expires-in must be between 1s and ${MAX_GRANT_DAYS}d.`,
      });
    const grant = await createGrant(services, {
      shopId,
      tier: tier as Tier,
      extraScopes: extra as Scope[],
      actorKind: kind,
      actorName: str(options, 'actor-name') ?? '',
      actorClient: str(options, 'actor-client') ?? null,
      expiresInMs,
    });
    await appendAudit(services.db, {
      shopId,
      actor: OPERATOR_ACTOR,
      action: 'grant.create',
      targetType: 'grant',
      targetId: grant.id,
      outcome: 'success',
      at: services.now(),
      details: {
        tier,
        scopes: grant.scopes,
        actor_kind: kind,
        actor_name: grant.actor.name,
        expires_at: grant.expires_at,
      },
    });
    const json = {
      id: grant.id,
      token: grant.token,
      scopes: grant.scopes,
      expires_at: grant.expires_at,
      shop_id: shopId,
      tier,
    };
    return {
      json,
      text: [
        `Grant ${grant.id} (${tier}) for ${grant.actor.kind} "${grant.actor.name}", expires ${grant.expires_at}.`,
        '',
        `Token (shown once, store it now): ${grant.token}`,
        '',
        `Scopes: ${grant.scopes.join(' ')}`,
      ].join('\n'),
    };
  },
  async 'grants list'({ options, services }) {
    const shop = str(options, 'shop');
    const rows = await listGrants(services, shop);
    const now = services.now();
    const json = rows.map((g) => ({
      id: g.id,
      shop_id: g.shop_id,
      status: grantStatus(g, now),
      tier: g.tier,
      scopes: JSON.parse(g.scopes_json) as string[],
      actor: { kind: g.actor_kind, name: g.actor_name, client: g.actor_client },
      token_hint: g.token_hint,
      created_at: new Date(Number(g.created_at)).toISOString(),
      expires_at: new Date(Number(g.expires_at)).toISOString(),
      revoked_at: g.revoked_at === null ? null : new Date(Number(g.revoked_at)).toISOString(),
      last_used_at: g.last_used_at === null ? null : new Date(Number(g.last_used_at)).toISOString(),
      use_count: Number(g.use_count),
    }));
    const text = json.length
      ? json
          .map(
            (g) =>
              `${g.id}  ${g.status.padEnd(7)}  ${g.tier.padEnd(17)}  ${g.actor.kind}:${g.actor.name}  expires ${g.expires_at}  ${g.token_hint}`,
          )
          .join('\n')
      : 'No grants.';
    return { json, text };
  },
  async 'grants revoke'({ options, services }) {
    const id = str(options, 'grant') ?? '';
    const g = await getGrantRow(services, id);
    if (!g)
      throw new AppError('not_found', { detail: `No grant ${id}. List grants with \`npx flowport grants list\`.` });
    const now = services.now();
    if (g.revoked_at === null) await revokeGrant(services, g, OPERATOR_ACTOR, now);
    const revokedAt = new Date(g.revoked_at === null ? now : Number(g.revoked_at)).toISOString();
    return { json: { id, revoked_at: revokedAt }, text: `Grant ${id} revoked at ${revokedAt}.` };
  },
  async 'audit verify'({ options, services }) {
    const shopId = str(options, 'shop');
    if (shopId !== undefined) {
      if (!(await getShop(services, shopId))) throw new AppError('not_found', { detail: `No shop ${shopId}.` });
      const r = await verifyShopAuditChain(services.db, shopId);
      if (r.ok)
        return {
          json: { shop_id: shopId, ...r },
          text: `Audit chain of shop ${shopId} intact: ${r.checked} entries verified (last seq ${r.lastSeq ?? 0}).`,
        };
      return {
        json: { shop_id: shopId, ...r },
        text: `Audit chain of shop ${shopId} BROKEN at seq ${r.broken?.seq} (${r.broken?.id ?? 'missing entry'}): ${r.broken?.detail}\n${r.checked} entries before it verified.`,
        exitCode: 1,
      };
    }
    const r = await verifyAuditChain(services.db);
    if (r.ok)
      return { json: r, text: `Audit chain intact: ${r.checked} entries verified (last seq ${r.lastSeq ?? 0}).` };
    return {
      json: r,
      text: `Audit chain BROKEN at seq ${r.broken?.seq} (${r.broken?.id ?? 'missing entry'}): ${r.broken?.detail}\n${r.checked} entries before it verified.`,
      exitCode: 1,
    };
  },
};
