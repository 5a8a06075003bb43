// Merchant sessions (ADR 1200, ADR 1410), the domain side: creating one for a verified sign-in,
// finding the live ones a browser's tokens name, and ending them. The store holds each token's
// hash, the shop, who signed in and the session's CSRF token; the cookie that carries the tokens
// is the surface's (shopify/merchant/session.ts).
import { appendAudit } from '../audit/log.ts';
import type { Services } from '../core/types.ts';
import { newId } from '../ids.ts';
import { randomToken, sha256Hex } from '../lib/crypto.ts';
import type { Db } from '../store/db.ts';
import {
  deleteSessionsExpiredBefore,
  findLiveSessionsByTokenHash,
  findSessionCreatedTimes,
  insertMerchantSession,
  type MerchantSession,
  type MerchantSessionSource,
  revokeMerchantSession,
} from '../store/tables/merchant.ts';

export const MERCHANT_SESSION_MS = 8 * 3_600_000;

/** Creates a session (inside the caller's transaction). Returns its id and the token the browser keeps. */
export async function createMerchantSession(
  tx: Db,
  input: { shopId: string; userName: string; userId?: string | null; source: MerchantSessionSource },
  now: number,
): Promise<{ id: string; token: string }> {
  const token = randomToken(32);
  const id = newId('merchantSession');
  // Sessions long over (expired a day ago) are of no use to anyone; the audit log keeps their ids.
  await deleteSessionsExpiredBefore(tx, now - 86_400_000);
  await insertMerchantSession(tx, {
    id,
    tokenHash: sha256Hex(token),
    shopId: input.shopId,
    userName: input.userName.slice(0, 200),
    userId: input.userId ?? null,
    source: input.source,
    csrfToken: randomToken(24),
    at: now,
    expiresAt: now + MERCHANT_SESSION_MS,
  });
  return { id, token };
}

/** The live sessions (not expired, revoked, or of an uninstalled shop) of some tokens, in their order, one per shop. */
export async function liveSessions(
  services: Pick<Services, 'db' | 'now'>,
  tokens: readonly string[],
): Promise<(MerchantSession & { token: string })[]> {
  if (tokens.length === 0) return [];
  const hashes = tokens.map(sha256Hex);
  const rows = await findLiveSessionsByTokenHash(services.db, hashes, services.now());
  const byHash = new Map(rows.map((r) => [r.token_hash, r]));
  const seen = new Set<string>();
  const out: (MerchantSession & { token: string })[] = [];
  tokens.forEach((token, i) => {
    const row = byHash.get(hashes[i] as string);
    if (!row || row.connection_status === 'uninstalled' || seen.has(row.shop_id)) return;
    seen.add(row.shop_id);
    const { connection_status: _c, token_hash: _h, ...session } = row;
    out.push({ ...session, expires_at: Number(session.expires_at), token });
  });
  return out;
}

/** Revokes a session replaced by a newer sign-in to the same shop in the same browser. */
export async function revokeReplacedSession(services: Pick<Services, 'db' | 'now'>, sessionId: string): Promise<void> {
  await revokeMerchantSession(services.db, sessionId, services.now());
}

/** Signs out: ends each session and audits it, in one transaction. */
export async function signOutSessions(
  services: Pick<Services, 'db' | 'now'>,
  sessions: readonly MerchantSession[],
  requestId: string,
): Promise<void> {
  const now = services.now();
  await services.db.tx(async (tx) => {
    for (const session of sessions) {
      await revokeMerchantSession(tx, session.id, now);
      await appendAudit(tx, {
        shopId: session.shop_id,
        actor: { kind: 'human', name: session.user_name },
        action: 'merchant.sign_out',
        targetType: 'merchant_session',
        targetId: session.id,
        outcome: 'success',
        requestId,
        at: now,
      });
    }
  });
}

/** The newest of `sessions` created at or before `at` (their order is the browser's, newest first), or null. */
export async function sessionSignedInBy(
  services: Pick<Services, 'db'>,
  sessions: readonly MerchantSession[],
  at: number,
): Promise<MerchantSession | null> {
  if (sessions.length === 0) return null;
  const rows = await findSessionCreatedTimes(
    services.db,
    sessions.map((s) => s.id),
  );
  const createdAt = new Map(rows.map((r) => [r.id, Number(r.created_at)]));
  return sessions.find((s) => (createdAt.get(s.id) ?? Number.POSITIVE_INFINITY) <= at) ?? null;
}
