// Grants a merchant makes and ends (on the merchant page, or by approving an agent's OAuth
// consent): created or revoked and audited with the merchant as the human actor.
import { appendAudit } from '../audit/log.ts';
import { type CreatedGrant, createGrant } from '../auth/grants.ts';
import type { Tier } from '../auth/scopes.ts';
import type { Services } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import type { Db } from '../store/db.ts';
import { findShopGrantRevocation, revokeGrantOnce } from '../store/tables/grants.ts';
import type { MerchantSession } from '../store/tables/merchant.ts';

/** Creates a grant as the merchant, in the caller's transaction. */
export async function createGrantAsMerchant(
  tx: Db,
  by: { session: Pick<MerchantSession, 'shop_id' | 'user_name'>; requestId: string; at: number },
  grant: { tier: Tier; actorKind: 'agent' | 'human'; actorName: string; actorClient?: string; days: number },
  /** What the audit entry adds: how it was made (`via`) and anything particular to that way. */
  details: { via: string } & Record<string, unknown>,
): Promise<CreatedGrant> {
  const g = await createGrant(
    { db: tx, now: () => by.at },
    {
      shopId: by.session.shop_id,
      tier: grant.tier,
      actorKind: grant.actorKind,
      actorName: grant.actorName,
      ...(grant.actorClient ? { actorClient: grant.actorClient } : {}),
      expiresInMs: grant.days * 86_400_000,
    },
  );
  await appendAudit(tx, {
    shopId: by.session.shop_id,
    actor: { kind: 'human', name: by.session.user_name },
    action: 'grant.create',
    targetType: 'grant',
    targetId: g.id,
    outcome: 'success',
    requestId: by.requestId,
    at: by.at,
    details: {
      tier: grant.tier,
      actor_kind: grant.actorKind,
      actor_name: grant.actorName,
      expires_at: g.expires_at,
      ...details,
    },
  });
  return g;
}

/** The merchant page's "Create grant": one audited transaction. */
export async function createMerchantPageGrant(
  services: Pick<Services, 'db' | 'now'>,
  by: { session: Pick<MerchantSession, 'shop_id' | 'user_name'>; requestId: string },
  grant: { tier: Tier; actorKind: 'agent' | 'human'; actorName: string; days: number },
  /** Where it was made: the merchant page, or the embedded console. */
  via: 'merchant_page' | 'console' = 'merchant_page',
): Promise<CreatedGrant> {
  const at = services.now();
  return services.db.tx((tx) => createGrantAsMerchant(tx, { ...by, at }, grant, { via }));
}

/** The merchant page's "Revoke": a grant of the session's shop (another shop's answers as missing); already revoked stays as it was. */
export async function revokeGrantAsMerchant(
  services: Pick<Services, 'db' | 'now'>,
  by: { session: Pick<MerchantSession, 'shop_id' | 'user_name'>; requestId: string },
  grantId: string,
  via: 'merchant_page' | 'console' = 'merchant_page',
): Promise<void> {
  const now = services.now();
  const { session } = by;
  await services.db.tx(async (tx) => {
    const g = await findShopGrantRevocation(tx, grantId, session.shop_id);
    if (!g) throw new AppError('not_found', { detail: `No grant ${grantId.slice(0, 60)} in this shop.` });
    if (g.revoked_at !== null) return;
    await revokeGrantOnce(tx, grantId, now);
    await appendAudit(tx, {
      shopId: session.shop_id,
      actor: { kind: 'human', name: session.user_name },
      action: 'grant.revoke',
      targetType: 'grant',
      targetId: grantId,
      outcome: 'success',
      requestId: by.requestId,
      at: now,
      details: { via },
    });
  });
}
