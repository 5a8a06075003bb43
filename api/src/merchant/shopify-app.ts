// The Shopify app's verbs (ADR 1200, ADR 1210): installing and reconnecting a shop, signing a
// staff member in, spending an install's state, remembering a handled webhook, the uninstall, and
// the privacy requests. The surface (api/src/shopify/) verifies Shopify's signatures (HMAC, id
// token) and parses; these verbs hold the state rules and write through the tables' owners, each
// change in one audited transaction.
import { appendAudit, type AuditActor } from '../audit/log.ts';
import { isSandbox } from '../config.ts';
import type { Services } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import { bodyRetentionMs, releaseShopInTx } from '../handoff/lifecycle.ts';
import { SUPPORT_CODES } from '../handoff/outcomes.ts';
import type { TokenResponse } from '../handoff/shop-tokens.ts';
import { newId } from '../ids.ts';
import { sha256Hex } from '../lib/crypto.ts';
import type { Db } from '../store/db.ts';
import { expireHeldEvents, holdWaitingEvents } from '../store/tables/events/merchant.ts';
import { revokeShopGrants } from '../store/tables/grants.ts';
import {
  deleteIdTokenUsesExpiredBefore,
  deleteSpentStatesBefore,
  deleteWebhookIdsBefore,
  insertIdTokenUse,
  insertSpentState,
  insertWebhookId,
  type MerchantSessionSource,
  revokeShopMerchantSessions,
} from '../store/tables/merchant.ts';
import {
  findShopPlan,
  findShopStatusByDomain,
  insertInstalledShop,
  markShopUninstalled,
  reconnectShop,
  type ShopTokenColumns,
} from '../store/tables/shops.ts';
import { createMerchantSession } from './sessions.ts';

export const INSTALL_ACTOR: AuditActor = { kind: 'system', name: 'Shopify (app install)' };
export const UNINSTALL_ACTOR: AuditActor = { kind: 'system', name: 'Shopify (app/uninstalled webhook)' };
export const PRIVACY_ACTOR: AuditActor = { kind: 'system', name: 'Shopify (privacy webhook)' };

/** How long a handled webhook id is remembered (Shopify retries for up to 48 hours). */
export const WEBHOOK_ID_KEEP_MS = 7 * 86_400_000;

// ── install and sign-in ─────────────────────────────────────────────────────

/**
 * Spends an install's state once, by one conditional write (ADR 1420): the first callback's insert
 * records it; a replay, or a simultaneous callback, finds it recorded. Spent states are kept one
 * lifetime (`ttlMs`) past their expiry, so a callback delayed past that moment never finds its row purged.
 */
export async function spendInstallState(
  services: Pick<Services, 'db' | 'now'>,
  s: { state: string; shop: string; mode: string; expiresAt: number; ttlMs: number },
): Promise<void> {
  const now = services.now();
  await deleteSpentStatesBefore(services.db, now - s.ttlMs);
  const spent = await insertSpentState(services.db, {
    stateHash: sha256Hex(s.state),
    shopDomain: s.shop,
    mode: s.mode,
    at: now,
    expiresAt: s.expiresAt,
  });
  if (spent.changes === 0)
    throw new AppError('shopify_oauth_state_invalid', { detail: 'This state was already used once.' });
}

/** The shop's token columns from a token response (expiring offline tokens carry a refresh token). */
function tokenColumns(services: Pick<Services, 'secrets'>, t: TokenResponse, now: number): ShopTokenColumns {
  const expiring = typeof t.expires_in === 'number' && typeof t.refresh_token === 'string';
  return {
    access_token_enc: services.secrets.encrypt(t.access_token),
    access_token_expires_at: expiring ? now + (t.expires_in as number) * 1000 : null,
    refresh_token_enc: expiring ? services.secrets.encrypt(t.refresh_token as string) : null,
    refresh_token_expires_at:
      expiring && typeof t.refresh_token_expires_in === 'number' ? now + t.refresh_token_expires_in * 1000 : null,
  };
}

/** How the audit names a store's owner when Shopify names no user (an offline token). */
export const storeOwnerName = (shop: string) => `Store owner of ${shop}`;

/** Who a token response names: the associated user (online tokens), else the store owner. */
export function userNameOf(t: TokenResponse, shop: string): { name: string; id: string | null } {
  const u = t.associated_user;
  if (!u) return { name: storeOwnerName(shop), id: null };
  const full = [u.first_name, u.last_name].filter(Boolean).join(' ').trim();
  return { name: full || u.email || `Staff member ${u.id ?? ''}`.trim(), id: u.id === undefined ? null : String(u.id) };
}

/** Creates a merchant session and audits the sign-in (in the caller's transaction). Returns the token. */
async function signInInTx(
  tx: Db,
  p: { shopId: string; user: { name: string; id: string | null }; source: MerchantSessionSource },
  requestId: string | undefined,
  now: number,
): Promise<string> {
  const session = await createMerchantSession(
    tx,
    { shopId: p.shopId, userName: p.user.name, userId: p.user.id, source: p.source },
    now,
  );
  await appendAudit(tx, {
    shopId: p.shopId,
    actor: { kind: 'human', name: p.user.name },
    action: 'merchant.sign_in',
    targetType: 'merchant_session',
    targetId: session.id,
    outcome: 'success',
    ...(requestId === undefined ? {} : { requestId }),
    at: now,
    details: { source: p.source },
  });
  return session.token;
}

/** A reinstall: the token stored, held events past retention expired, the rest released. */
async function reconnectInTx(
  tx: Db,
  services: Pick<Services, 'config'>,
  shopId: string,
  cols: ShopTokenColumns,
  now: number,
): Promise<{ released: number; expiredHeld: number }> {
  await reconnectShop(tx, shopId, cols, now);
  // Held events past the plan's retention expire as retention says; the rest are released.
  const plan = await findShopPlan(tx, shopId);
  const expired = await expireHeldEvents(tx, {
    shopId,
    receivedBy: now - bodyRetentionMs(services.config, plan?.plan ?? 'free'),
    code: SUPPORT_CODES.expired_while_held,
    at: now,
  });
  return { expiredHeld: expired.changes, released: (await releaseShopInTx(tx, shopId, now)) ?? 0 };
}

/**
 * Creates or reconnects the shop from a fresh offline token, in the caller's transaction, audited.
 * `via` says how the token came: the OAuth install's code, or a session token's exchange.
 */
async function installInTx(
  tx: Db,
  services: Pick<Services, 'now' | 'config' | 'secrets'>,
  input: { shop: string; t: TokenResponse; requestId: string; via: 'oauth' | 'token_exchange' },
  now: number,
): Promise<string> {
  const { shop, t } = input;
  const cols = tokenColumns(services, t, now);
  const id = newId('shop');
  let existing = await findShopStatusByDomain(tx, shop);
  // A first install is an upsert: a simultaneous callback of the same first install may have
  // created the shop since the look above; then this callback reconnects it with its own token.
  if (!existing) {
    const row = { id, domain: shop, sandbox: isSandbox(services.config), tokens: cols, at: now };
    if ((await insertInstalledShop(tx, row)).changes === 0) existing = await findShopStatusByDomain(tx, shop);
  }
  const shopId = existing?.id ?? id;
  const reconnected = existing ? await reconnectInTx(tx, services, shopId, cols, now) : null;
  await appendAudit(tx, {
    shopId,
    actor: INSTALL_ACTOR,
    action: existing ? 'shop.reinstall' : 'shop.install',
    targetType: 'shop',
    targetId: shopId,
    outcome: 'success',
    requestId: input.requestId,
    at: now,
    details: {
      domain: shop,
      ...(existing && reconnected
        ? {
            previous_status: existing.connection_status,
            released_held_events: reconnected.released,
            expired_held_events: reconnected.expiredHeld,
          }
        : {}),
      expiring_token: cols.access_token_expires_at !== null,
      scope: t.scope ?? '',
      ...(input.via === 'token_exchange' ? { via: 'token_exchange' } : {}),
    },
  });
  return shopId;
}

/**
 * Creates or reconnects the shop from a fresh offline token and signs the merchant in; one audited
 * transaction. Returns the session's token.
 */
export async function installShop(
  services: Pick<Services, 'db' | 'now' | 'config' | 'secrets' | 'hooks'>,
  shop: string,
  t: TokenResponse,
  requestId: string,
): Promise<string> {
  const now = services.now();
  const user = userNameOf(t, shop);
  const result = await services.db.tx(async (tx) => {
    const shopId = await installInTx(tx, services, { shop, t, requestId, via: 'oauth' }, now);
    return signInInTx(tx, { shopId, user, source: 'oauth_install' }, requestId, now);
  });
  services.hooks.kickWorker?.();
  return result;
}

/**
 * Shopify-managed installation (ADR 1450): the offline token a session token was exchanged for
 * creates or reconnects the shop, audited; no merchant session (the embedded console sends a
 * session token with every request). Returns the shop's id.
 */
export async function installShopFromTokenExchange(
  services: Pick<Services, 'db' | 'now' | 'config' | 'secrets' | 'hooks'>,
  shop: string,
  t: TokenResponse,
  requestId: string,
): Promise<string> {
  const now = services.now();
  const shopId = await services.db.tx((tx) =>
    installInTx(tx, services, { shop, t, requestId, via: 'token_exchange' }, now),
  );
  services.hooks.kickWorker?.();
  return shopId;
}

/**
 * Spends a verified session token's jti (ADR 1450): one conditional insert into
 * shopify_id_token_uses; a second use of the same token is shopify_session_token_reused, on every
 * process and store. Kept until the token stops verifying.
 */
export async function spendSessionToken(
  services: Pick<Services, 'db' | 'now'>,
  claims: { shop: string; jti: string; usableUntil: number },
): Promise<void> {
  const now = services.now();
  await deleteIdTokenUsesExpiredBefore(services.db, now);
  const first = await insertIdTokenUse(services.db, {
    jti: claims.jti,
    shopDomain: claims.shop,
    at: now,
    expiresAt: claims.usableUntil,
  });
  if (first.changes !== 1) throw new AppError('shopify_session_token_reused');
}

/** Signs a staff member of an installed store in (online mode); stores no token. Returns the session's token. */
export async function signInStaff(
  services: Pick<Services, 'db' | 'now'>,
  shop: string,
  t: TokenResponse,
  requestId: string,
): Promise<string> {
  const now = services.now();
  const user = userNameOf(t, shop);
  return services.db.tx(async (tx) => {
    const existing = await findShopStatusByDomain(tx, shop);
    if (!existing || existing.connection_status === 'uninstalled')
      throw new AppError('shopify_shop_not_installed', { detail: `Flowport is not installed on ${shop}.` });
    return signInInTx(tx, { shopId: existing.id, user, source: 'oauth_online' }, requestId, now);
  });
}

/** Whether Flowport is installed on the store (known, and not uninstalled). */
export async function isShopInstalled(services: Pick<Services, 'db'>, shop: string): Promise<boolean> {
  const row = await findShopStatusByDomain(services.db, shop);
  return row !== undefined && row.connection_status !== 'uninstalled';
}

/**
 * Signs in from a verified Shopify session token (its claims: the store, the user, the jti and
 * until when it is usable). Each token's jti makes one session: the insert into
 * shopify_id_token_uses decides, in the transaction that creates the session (ADR 1210).
 */
export async function signInWithSessionToken(
  services: Pick<Services, 'db' | 'now'>,
  claims: { shop: string; userId: string | null; jti: string; usableUntil: number },
): Promise<string> {
  const shop = await findShopStatusByDomain(services.db, claims.shop);
  if (!shop || shop.connection_status === 'uninstalled')
    throw new AppError('shopify_shop_not_installed', { detail: `Flowport is not installed on ${claims.shop}.` });
  const now = services.now();
  const user = { name: `Shopify user ${claims.userId ?? 'unknown'}`, id: claims.userId };
  return services.db.tx(async (tx) => {
    await deleteIdTokenUsesExpiredBefore(tx, now);
    const first = await insertIdTokenUse(tx, {
      jti: claims.jti,
      shopDomain: claims.shop,
      at: now,
      expiresAt: claims.usableUntil,
    });
    if (first.changes !== 1) throw new AppError('shopify_session_token_reused');
    return signInInTx(tx, { shopId: shop.id, user, source: 'session_token' }, undefined, now);
  });
}

// ── webhooks ────────────────────────────────────────────────────────────────

/**
 * Records a verified delivery (inside the caller's transaction, before its effects). True the first
 * time this shop's topic has this id; false for a redelivery (or a concurrent twin: the primary key
 * decides, on both stores).
 */
export async function firstDelivery(
  tx: Db,
  input: { shopDomain: string; topic: string; webhookId: string },
  now: number,
): Promise<boolean> {
  await deleteWebhookIdsBefore(tx, now - WEBHOOK_ID_KEEP_MS);
  const r = await insertWebhookId(tx, { ...input, at: now });
  return r.changes === 1;
}

export const APP_UNINSTALLED_TOPIC = 'app/uninstalled';

export interface UninstallResult {
  duplicate: boolean;
  shopId: string | null;
  heldEvents: number;
  revokedGrants: number;
  revokedSessions: number;
}

/**
 * Applies one verified app/uninstalled delivery (idempotent per shop and webhook id), in one
 * audited transaction: the shop marked uninstalled and its token deleted, its waiting events held
 * (FP-H-UNIN), every grant and merchant session of it revoked. A reinstall restores it.
 */
export async function applyUninstall(
  services: Pick<Services, 'db' | 'now'>,
  input: { webhookId: string; shopDomain: string; requestId: string | null },
): Promise<UninstallResult> {
  const now = services.now();
  return services.db.tx(async (tx) => {
    const first = await firstDelivery(
      tx,
      { shopDomain: input.shopDomain, topic: APP_UNINSTALLED_TOPIC, webhookId: input.webhookId },
      now,
    );
    const none = { shopId: null, heldEvents: 0, revokedGrants: 0, revokedSessions: 0 };
    if (!first) return { duplicate: true, ...none };
    const shop = await findShopStatusByDomain(tx, input.shopDomain);
    if (!shop) return { duplicate: false, ...none };
    await markShopUninstalled(tx, shop.id, now);
    // Waiting and already-held events take the uninstall's code; one being delivered now is held
    // by the worker when Shopify refuses the deleted token, or when it is next claimed.
    const held = await holdWaitingEvents(tx, { shopId: shop.id, code: SUPPORT_CODES.uninstalled, at: now });
    const grants = await revokeShopGrants(tx, shop.id, now);
    const sessions = (await revokeShopMerchantSessions(tx, shop.id, now)).changes;
    await appendAudit(tx, {
      shopId: shop.id,
      actor: UNINSTALL_ACTOR,
      action: 'shop.uninstall',
      targetType: 'shop',
      targetId: shop.id,
      outcome: 'success',
      requestId: input.requestId,
      at: now,
      details: {
        webhook_id: input.webhookId,
        previous_status: shop.connection_status,
        access_token_deleted: true,
        held_events: held.changes,
        revoked_grants: grants.changes,
        revoked_sessions: sessions,
      },
    });
    return {
      duplicate: false,
      shopId: shop.id,
      heldEvents: held.changes,
      revokedGrants: grants.changes,
      revokedSessions: sessions,
    };
  });
}
