// MCP step-up (ADR 1430): before a tool runs, an OAuth access token that lacks the scope the call
// needs is refused with the scope named, so the transport answers HTTP 403
// `insufficient_scope` and the client asks the merchant for more (a new consent). The scope rule is
// the pipeline's own (authorizeScope, audited the same way); a confirmation or cancellation names
// the intent kind's scope. Grant tokens made by a human cannot re-authorize: their refusals stay
// tool results (ADR 0500).
import { authorizeScope } from '../auth/guard.ts';
import type { AnyOperation } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import { intentKindInShop } from '../intents/kind-of.ts';
import type { McpCallContext } from './server.ts';

export async function stepUpRefusal(op: AnyOperation, args: unknown, call: McpCallContext): Promise<AppError | null> {
  const { principal, services } = call;
  if (principal.resource === undefined) return null;
  try {
    await authorizeScope(principal, op, services, call.requestId);
  } catch (err) {
    if (err instanceof AppError && err.code === 'missing_scope') return err;
    throw err;
  }
  // Confirm and cancel need the intent kind's scope: named when the intent is this shop's.
  const intentId = (args as { intent_id?: unknown } | undefined)?.intent_id;
  if (!op.scopeAnyOf || typeof intentId !== 'string') return null;
  const kind = await intentKindInShop(services.db, principal.shopId, intentId);
  if (kind === null) return null;
  const forKind = op.scopeAnyOf.filter((s) => s.startsWith(`${kind}:`));
  if (forKind.length === 0 || forKind.some((s) => principal.scopes.includes(s))) return null;
  const [needed] = forKind as [string];
  return new AppError('missing_scope', {
    detail: `This ${kind} intent needs the \`${needed}\` scope, which this access token does not hold; ask the merchant for it (a new authorization).`,
    reason: `The grant does not include the ${needed} scope.`,
    requiredScope: needed,
    extra: { intent_id: intentId },
  });
}
