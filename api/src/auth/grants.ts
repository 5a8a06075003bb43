// Grants: created only by a human (operator CLI or sandbox bootstrap), bound to
// one shop, expanded from a tier to scopes, stored as a token hash.
import { type AuditActor, appendAudit } from '../audit/log.ts';
import { newId } from '../ids.ts';
import type { Services } from '../core/types.ts';
import { findGrant, type GrantRow, insertGrant, listGrantRows, markGrantRevoked } from '../store/tables/grants.ts';
import { hashGrantToken, grantTokenHint, mintGrantToken } from './grant-tokens.ts';
import { type Scope, TIER_SCOPES, type Tier } from './scopes.ts';

export const MAX_GRANT_DAYS = 90;

export interface CreatedGrant {
  id: string;
  token: string;
  shop_id: string;
  tier: Tier;
  scopes: Scope[];
  actor: { kind: 'agent' | 'human'; name: string };
  expires_at: string;
}

export async function createGrant(
  services: Pick<Services, 'db' | 'now'>,
  input: {
    shopId: string;
    tier: Tier;
    extraScopes?: Scope[];
    actorKind: 'agent' | 'human';
    actorName: string;
    actorClient?: string | null;
    expiresInMs: number;
  },
): Promise<CreatedGrant> {
  if (input.expiresInMs <= 0 || input.expiresInMs > MAX_GRANT_DAYS * 86_400_000) {
    throw new Error(`Grant expiry must be between 1 second and ${MAX_GRANT_DAYS} days.`);
  }
  const now = services.now();
  const token = mintGrantToken();
  const scopes = [...new Set([...TIER_SCOPES[input.tier], ...(input.extraScopes ?? [])])];
  const id = newId('grant');
  const expiresAt = now + input.expiresInMs;
  await insertGrant(services.db, {
    id,
    shop_id: input.shopId,
    token_hash: hashGrantToken(token),
    token_hint: grantTokenHint(token),
    tier: input.tier,
    scopes_json: JSON.stringify(scopes),
    actor_kind: input.actorKind,
    actor_name: input.actorName,
    actor_client: input.actorClient ?? null,
    created_at: now,
    expires_at: expiresAt,
  });
  return {
    id,
    token,
    shop_id: input.shopId,
    tier: input.tier,
    scopes,
    actor: { kind: input.actorKind, name: input.actorName },
    expires_at: new Date(expiresAt).toISOString(),
  };
}

/** Every grant, or one shop's, oldest first (never tokens: only their hashes are stored). */
export async function listGrants(services: Pick<Services, 'db'>, shopId?: string): Promise<GrantRow[]> {
  return listGrantRows(services.db, shopId);
}

export async function getGrantRow(services: Pick<Services, 'db'>, id: string): Promise<GrantRow | undefined> {
  return findGrant(services.db, id);
}

/** Revokes a grant at once and audits it, in one transaction; a grant already revoked stays as it was. */
export async function revokeGrant(
  services: Pick<Services, 'db'>,
  grant: Pick<GrantRow, 'id' | 'shop_id'>,
  actor: AuditActor,
  now: number,
): Promise<void> {
  await services.db.tx(async (tx) => {
    await markGrantRevoked(tx, grant.id, now);
    await appendAudit(tx, {
      shopId: grant.shop_id,
      actor,
      action: 'grant.revoke',
      targetType: 'grant',
      targetId: grant.id,
      outcome: 'success',
      at: now,
    });
  });
}
