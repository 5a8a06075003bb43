// Grants: created only by a human (operator CLI or sandbox bootstrap), bound to
// one shop, expanded from a tier to scopes, stored as a token hash.
import { type AuditActor, appendAudit } from '../audit/log.ts';
import { newId } from '../ids.ts';
import type { Services } from '../core/types.ts';
import { hashGrantToken, grantTokenHint, mintGrantToken } from './grant-tokens.ts';
import { type Scope, TIER_SCOPES, type Tier } from './scopes.ts';

export const MAX_GRANT_DAYS = 90;

export interface GrantRow {
  id: string;
  shop_id: string;
  token_hash: string;
  token_hint: string;
  tier: string;
  scopes_json: string;
  actor_kind: 'agent' | 'human';
  actor_name: string;
  actor_client: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
  use_count: number;
}

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
  await services.db.run(
    `INSERT INTO grants (id, shop_id, token_hash, token_hint, tier, scopes_json, actor_kind, actor_name, actor_client, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      id,
      input.shopId,
      hashGrantToken(token),
      grantTokenHint(token),
      input.tier,
      JSON.stringify(scopes),
      input.actorKind,
      input.actorName,
      input.actorClient ?? null,
      now,
      expiresAt,
    ],
  );
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
  return services.db.all<GrantRow>(
    `SELECT * FROM grants${shopId ? ' WHERE shop_id = ?' : ''} ORDER BY id`,
    shopId ? [shopId] : [],
  );
}

export async function getGrantRow(services: Pick<Services, 'db'>, id: string): Promise<GrantRow | undefined> {
  return services.db.get<GrantRow>('SELECT * FROM grants WHERE id = ?', [id]);
}

/** Revokes a grant at once and audits it, in one transaction; a grant already revoked stays as it was. */
export async function revokeGrant(
  services: Pick<Services, 'db'>,
  grant: Pick<GrantRow, 'id' | 'shop_id'>,
  actor: AuditActor,
  now: number,
): Promise<void> {
  await services.db.tx(async (tx) => {
    await tx.run('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, grant.id]);
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
