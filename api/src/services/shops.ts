// Shops: the merchant's store, its plan, connection state and (encrypted) Admin API token.
import { AppError } from '../errors/problem.ts';
import { newId } from '../ids.ts';
import type { PlanId } from '../plans.ts';
import type { Services } from '../core/types.ts';
import { findShop, insertShop, listShopRows, type ShopRow } from '../store/tables/shops.ts';

export const SHOP_DOMAIN_RE = /^[a-z0-9][a-z0-9-]{0,60}\.myshopify\.com$/;

/** A shop domain as stored (trimmed, lower case), or invalid_request when it is no myshopify.com domain. */
export function normalizeShopDomain(input: string): string {
  const domain = input.trim().toLowerCase();
  if (!SHOP_DOMAIN_RE.test(domain))
    throw new AppError('invalid_request', {
      detail: `The shop domain must look like "example.myshopify.com", got "${input.slice(0, 100)}".`,
    });
  return domain;
}

export async function createShop(
  services: Pick<Services, 'db' | 'secrets' | 'now'>,
  input: {
    domain: string;
    plan?: PlanId;
    sandbox?: boolean;
    accessToken?: string | null;
    adminBaseUrl?: string | null;
  },
): Promise<ShopRow> {
  const domain = normalizeShopDomain(input.domain);
  const now = services.now();
  const row: ShopRow = {
    id: newId('shop'),
    domain,
    plan: input.plan ?? 'free',
    sandbox: input.sandbox ? 1 : 0,
    connection_status: 'connected',
    access_token_enc: input.accessToken ? services.secrets.encrypt(input.accessToken) : null,
    admin_base_url: input.adminBaseUrl ?? null,
    created_at: now,
    updated_at: now,
    installed_at: null,
    uninstalled_at: null,
    access_token_expires_at: null,
    refresh_token_enc: null,
    refresh_token_expires_at: null,
  };
  await insertShop(services.db, row);
  return row;
}

/** Every shop in the store, oldest first. */
export async function listShops(services: Pick<Services, 'db'>): Promise<ShopRow[]> {
  return listShopRows(services.db);
}

export async function getShop(services: Pick<Services, 'db'>, id: string): Promise<ShopRow | undefined> {
  return findShop(services.db, id);
}
