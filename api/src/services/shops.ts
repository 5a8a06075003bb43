// Shops: the merchant's store, its plan, connection state and (encrypted) Admin API token.
import { AppError } from '../errors/problem.ts';
import type { UnavailableShopStatus } from '../handoff/outcomes.ts';
import { newId } from '../ids.ts';
import type { PlanId } from '../plans.ts';
import type { Services } from '../core/types.ts';

export interface ShopRow {
  id: string;
  domain: string;
  plan: string;
  sandbox: number;
  /** UnavailableShopStatus (`frozen`, `locked`, …): Shopify refused the store; its events are held and probed. */
  connection_status: 'connected' | 'disconnected' | 'uninstalled' | UnavailableShopStatus;
  access_token_enc: string | null;
  admin_base_url: string | null;
  created_at: number;
  updated_at: number;
  installed_at: number | null;
  uninstalled_at: number | null;
  access_token_expires_at: number | null;
  refresh_token_enc: string | null;
  refresh_token_expires_at: number | null;
}

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
  await services.db.run(
    `INSERT INTO shops (id, domain, plan, sandbox, connection_status, access_token_enc, admin_base_url, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.domain,
      row.plan,
      row.sandbox,
      row.connection_status,
      row.access_token_enc,
      row.admin_base_url,
      now,
      now,
    ],
  );
  return row;
}

/** Every shop in the store, oldest first. */
export async function listShops(services: Pick<Services, 'db'>): Promise<ShopRow[]> {
  return services.db.all<ShopRow>('SELECT * FROM shops ORDER BY id');
}

export async function getShop(services: Pick<Services, 'db'>, id: string): Promise<ShopRow | undefined> {
  return services.db.get<ShopRow>('SELECT * FROM shops WHERE id = ?', [id]);
}
