// The Guard the operation pipeline uses: bearer grant → principal, scope check,
// usage admission, and actor attribution in the audit log. One implementation
// for HTTP, MCP and CLI.
//
// What is audited (see docs/adr/0300-grants-reads-audit.md and 1101): every refusal of an
// identified grant — expired, revoked, missing scope, rate limit and plan cap once per grant and
// kind per window, counted otherwise — every refusal thrown by an operation, and every non-read
// operation (success or failure). Successful reads are metered, not audited.
// Unknown or malformed tokens are not audited: they carry no attribution and a
// flood of them must not grow the log.
import { appendAudit } from '../audit/log.ts';
import { ERROR_CATALOG } from '../errors/catalog.ts';
import { AppError } from '../errors/problem.ts';
import type { Guard } from '../core/types.ts';
import type { AnyOperation, Principal, Services } from '../core/types.ts';
import { admitUsage } from '../usage/admit.ts';
import { firstRefusalOfWindow, RATE_WINDOW_MS, refusalAuditKey } from '../usage/rate-limit.ts';
import { hashGrantToken, isWellFormedGrantToken } from './grant-tokens.ts';
import { recordGrantUse } from '../usage/grant-use.ts';
import {
  findGrantWithShop,
  findGrantWithShopByTokenHash,
  type GrantRow,
  type GrantWithShop,
} from '../store/tables/grants.ts';
import { ACCESS_TOKEN_PREFIX, findAccessToken } from './access-tokens.ts';
import { usagePeriod } from '../plans.ts';

/** The audited facts of a refusal, with how many the previous window counted when more than its audited one. */
function refusalDetails(details: Record<string, unknown>, previousWindow: number): Record<string, unknown> {
  return previousWindow > 1
    ? { ...details, refused_in_previous_window: previousWindow, window_s: RATE_WINDOW_MS / 1000 }
    : details;
}

export function principalOf(row: GrantRow): Principal {
  return {
    grantId: row.id,
    shopId: row.shop_id,
    scopes: JSON.parse(row.scopes_json) as string[],
    actor: { kind: row.actor_kind, name: row.actor_name, client: row.actor_client },
    tier: row.tier,
    expiresAt: Number(row.expires_at),
  };
}

function actorOf(p: Principal) {
  return { grantId: p.grantId, kind: p.actor.kind, name: p.actor.name };
}

/**
 * An OAuth access token (ADR 1400): live itself (not expired, not revoked with its family), and its
 * grant checked exactly as a grant token's is. The principal carries the token's resource; the
 * transport checks it names the resource being called.
 */
async function authenticateAccessToken(
  token: string,
  services: Services,
  requestId?: string,
  deferUse = false,
): Promise<Principal> {
  const row = await findAccessToken(services, token);
  if (!row) throw new AppError('invalid_token', { reason: 'No access token matches this token.' });
  if (row.revoked_at !== null || Number(row.expires_at) <= services.now())
    throw new AppError('access_token_expired', {
      reason: `The access token ${row.token_hint} ${row.revoked_at !== null ? 'was revoked' : 'has expired'}.`,
      extra: { grant_id: row.grant_id },
    });
  const period = usagePeriod(services.now());
  const grant = await findGrantWithShop(services.db, row.grant_id, period);
  if (!grant) throw new AppError('invalid_token', { reason: 'No grant matches this token.' });
  const principal = await checkGrantRow(grant, period, services, requestId, deferUse);
  return { ...principal, resource: row.resource };
}

export async function authenticateGrant(
  token: string | null,
  services: Services,
  requestId?: string,
  options: { deferUse?: boolean } = {},
): Promise<Principal> {
  const deferUse = options.deferUse ?? false;
  if (token === null) throw new AppError('missing_token', { reason: 'No Authorization: Bearer header was sent.' });
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) return authenticateAccessToken(token, services, requestId, deferUse);
  if (!isWellFormedGrantToken(token))
    throw new AppError('invalid_token', { reason: 'The token is malformed or its checksum is wrong.' });
  const period = usagePeriod(services.now());
  const row = await findGrantWithShopByTokenHash(services.db, hashGrantToken(token), period);
  if (!row) throw new AppError('invalid_token', { reason: 'No grant matches this token.' });
  return checkGrantRow(row, period, services, requestId, deferUse);
}

/**
 * A grant's revocation and expiry (refusals audited once per window), then its use recorded, or
 * left to the call's next write with `deferUse` (the pipeline's admission, ADR 0308).
 */
async function checkGrantRow(
  row: GrantWithShop,
  /** The usage period the row's replays used were read for. */
  period: string,
  services: Services,
  requestId?: string,
  deferUse = false,
): Promise<Principal> {
  const now = services.now();
  let refusal: AppError | null = null;
  if (row.revoked_at !== null) {
    refusal = new AppError('grant_revoked', {
      reason: `Grant ${row.id} was revoked at ${new Date(Number(row.revoked_at)).toISOString()}.`,
      extra: { grant_id: row.id },
    });
  } else if (Number(row.expires_at) <= now) {
    refusal = new AppError('grant_expired', {
      reason: `Grant ${row.id} expired at ${new Date(Number(row.expires_at)).toISOString()}.`,
      extra: { grant_id: row.id },
    });
  }
  if (refusal) {
    const code = refusal.code;
    // A dead credential can be replayed without limit: the first refusal of each window is
    // audited, the rest are counted (and that count lands in the next window's entry).
    await services.db.tx(async (tx) => {
      const first = await firstRefusalOfWindow(tx, refusalAuditKey(row.id, code), now);
      if (!first) return;
      await appendAudit(tx, {
        shopId: row.shop_id,
        actor: { grantId: row.id, kind: row.actor_kind, name: row.actor_name },
        action: 'grant.authenticate',
        targetType: 'grant',
        targetId: row.id,
        outcome: 'refused',
        requestId: requestId ?? null,
        at: now,
        details: refusalDetails({ code }, first.previousWindow),
      });
    });
    throw refusal;
  }
  const principal: Principal = {
    ...principalOf(row),
    useDeferred: true,
    ...(row.shop_plan != null
      ? {
          shopLimits: { plan: row.shop_plan, limits_json: row.shop_limits_json, sandbox: Number(row.shop_sandbox) },
          shopState: {
            connectionStatus: row.shop_connection_status ?? 'connected',
            replaysUsed: Number(row.shop_replays_used ?? 0),
            period,
          },
        }
      : {}),
  };
  if (deferUse) return principal;
  // Counted in memory, added to the store in batches (ADR 0310).
  recordGrantUse(services.db, principal, now);
  return principal;
}

export async function authorizeScope(
  principal: Principal,
  op: AnyOperation,
  services?: Services,
  requestId?: string,
): Promise<void> {
  if (op.scope === null || principal.scopes.includes(op.scope)) return;
  if (services) {
    // Scope is checked before usage admission, so these refusals are not rate-limited: audited
    // once per window per grant and operation, counted otherwise.
    const now = services.now();
    recordGrantUse(services.db, principal, now);
    await services.db.tx(async (tx) => {
      const first = await firstRefusalOfWindow(tx, refusalAuditKey(principal.grantId, `scope:${op.operationId}`), now);
      if (!first) return;
      await appendAudit(tx, {
        shopId: principal.shopId,
        actor: actorOf(principal),
        action: op.operationId,
        outcome: 'refused',
        requestId: requestId ?? null,
        at: now,
        details: refusalDetails({ code: 'missing_scope', required_scope: op.scope }, first.previousWindow),
      });
    });
  }
  throw new AppError('missing_scope', {
    detail: `This grant lacks the \`${op.scope}\` scope required by ${op.operationId}.`,
    reason: `The grant does not include the ${op.scope} scope.`,
    requiredScope: op.scope,
  });
}

/** `event_id` → `event`; the first path-style id in the input names the audit target. */
/** Path parameters whose object goes by another name in the API (and in the engine's audit entries). */
const TARGET_TYPE_NAMES: Record<string, string> = { intent: 'action_intent' };

function targetOf(op: AnyOperation, input: Record<string, unknown>): { type: string | null; id: string | null } {
  const keys = Object.keys(op.request.params?.shape ?? {});
  for (const k of keys) {
    const v = input[k];
    if (typeof v === 'string') {
      const type = k.replace(/_id$/, '');
      return { type: TARGET_TYPE_NAMES[type] ?? type, id: v };
    }
  }
  return { type: null, id: null };
}

export const grantGuard: Guard = {
  authenticate: authenticateGrant,
  authorize: authorizeScope,
  admit: admitUsage,
  async record({ principal, op, services, requestId, input, error, audited }) {
    // The verb wrote this step's entry itself (the intent engine): one entry per step, not two.
    if (audited) return;
    const isRefusal = error instanceof AppError && 'layer' in ERROR_CATALOG[error.code];
    if (op.kind === 'read' && !isRefusal) return;
    const target = targetOf(op, input);
    await appendAudit(services.db, {
      shopId: principal.shopId,
      actor: actorOf(principal),
      action: op.operationId,
      targetType: target.type,
      targetId: target.id,
      outcome: error === undefined ? 'success' : isRefusal ? 'refused' : 'failed',
      requestId,
      at: services.now(),
      details: error instanceof AppError ? { code: error.code } : error === undefined ? {} : { code: 'internal_error' },
    });
  },
};
