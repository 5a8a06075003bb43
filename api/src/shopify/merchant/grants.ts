// A grant the merchant makes (on the merchant page, or by approving an agent's OAuth consent):
// created and audited with the merchant as the human actor, in the caller's transaction.
import { appendAudit } from '../../audit/log.ts';
import { type CreatedGrant, createGrant } from '../../auth/grants.ts';
import type { Tier } from '../../auth/scopes.ts';
import type { Db } from '../../store/db.ts';
import type { MerchantSession } from './session.ts';

export async function createGrantAsMerchant(
  tx: Db,
  by: { session: MerchantSession; requestId: string; at: number },
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
