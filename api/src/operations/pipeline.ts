// The one path every operation call takes, whatever the transport (HTTP, MCP, CLI):
// authenticate → authorize (scope) → admit (usage: rate limits, plan caps, metering) → run.
// Transports only parse input and map the result or AppError to their wire format.
import { errorDef } from '../errors/catalog.ts';
import { AppError } from '../errors/problem.ts';
import { refuseControlCharacters } from '../lib/control-chars.ts';
import { asStoreFull } from '../store/full.ts';
import type { AnyOperation, Guard, OperationContext, Principal, PublicContext, Services } from '../core/types.ts';

let guard: Guard | null = null;

/** Called once at startup by the auth subsystem. */
export function installGuard(g: Guard): void {
  guard = g;
}

export interface InvokeArgs {
  services: Services;
  requestId: string;
  transport: OperationContext['transport'];
  /** Raw bearer token (without "Bearer "), or null when absent. */
  token: string | null;
  headers?: Record<string, string | undefined>;
  input: Record<string, unknown>;
  /**
   * A principal the transport already authenticated with `authenticateToken`
   * (MCP authenticates once per HTTP request); scope and usage checks still run here.
   */
  principal?: Principal;
}

/** Authenticate a bearer token with the installed guard (transports that must answer 401 before dispatch). */
export async function authenticateToken(
  token: string | null,
  services: Services,
  requestId?: string,
  options?: { deferUse?: boolean },
): Promise<Principal> {
  if (!guard) throw new AppError('internal_error', { detail: 'No authentication guard is installed.' });
  return guard.authenticate(token, services, requestId, options).catch((err: unknown) => {
    countRefusal(services, err);
    throw asStoreFull(err);
  });
}

/** Refusals by layer and code, whatever the transport (/metrics). */
function countRefusal(services: Services, error: unknown): void {
  if (!(error instanceof AppError) || !services.metrics) return;
  const layer = errorDef(error.code).layer;
  if (layer) services.metrics.refusals.inc({ layer, code: error.code });
}

export async function invokeOperation(op: AnyOperation, args: InvokeArgs): Promise<unknown> {
  // Before anything reaches the store, whatever the transport: a NUL or control character in an
  // id, filter or name is a 400 on both stores, never a PostgreSQL encoding error (500).
  try {
    refuseControlCharacters(args.input, args.headers);
  } catch (err) {
    countRefusal(args.services, err);
    throw err;
  }
  // A full disk is a temporary 503 store_full with Retry-After on every transport, not a 500.
  return invokeChecked(op, args).catch((err: unknown) => {
    countRefusal(args.services, err);
    throw asStoreFull(err);
  });
}

async function invokeChecked(op: AnyOperation, args: InvokeArgs): Promise<unknown> {
  const base = {
    services: args.services,
    requestId: args.requestId,
    transport: args.transport,
    headers: args.headers ?? {},
  };
  if (op.scope === null)
    return op.run({ ctx: { ...base, principal: null } satisfies PublicContext, input: args.input });
  if (!guard) throw new AppError('internal_error', { detail: 'No authentication guard is installed.' });
  // The grant's use is counted in admission's transaction (or a scope refusal's): one write per call.
  const principal =
    args.principal ?? (await guard.authenticate(args.token, args.services, args.requestId, { deferUse: true }));
  await guard.authorize(principal, op, args.services, args.requestId);
  const admission = (await guard.admit(principal, op, args.services, args.requestId)) ?? null;
  const audited = { done: false };
  const ctx: OperationContext = { ...base, principal, audited };
  const run = async () => {
    try {
      return await op.run({ ctx, input: args.input });
    } catch (error) {
      // Nothing was created: what admission counted for it is given back (previews).
      // A failed refund (the store is down) must not replace the refusal the caller is owed.
      await admission?.refund().catch(() => {});
      throw error;
    }
  };
  if (!guard.record) return run();
  const record = { principal, op, services: args.services, requestId: args.requestId, input: args.input };
  let out: unknown;
  try {
    out = await run();
  } catch (error) {
    await guard.record({ ...record, error, audited: audited.done });
    throw error;
  }
  await guard.record({ ...record, audited: audited.done });
  return out;
}
