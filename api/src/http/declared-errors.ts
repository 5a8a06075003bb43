// What an operation declares it can answer, and the check that it answers nothing else.
// The declared codes are derived: the middleware's (authentication, closed input, the input
// guard, body parsing and limits, other methods) from what the operation takes and needs, plus
// the operation's own `errors`. An answer with a code outside them is reported where it happens
// (HTTP route, MCP tool call): an error log line and ServiceHooks.undeclaredError, which test
// servers turn into a failed test. The answer itself is unchanged.
import type { AnyOperation, Services } from '../core/types.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import { CAP_EXEMPT_OPERATIONS } from '../usage/admit.ts';
import { COMMON_ERRORS_PUBLIC, COMMON_ERRORS_SCOPED } from './problem-response.ts';

/**
 * The codes an operation can return: the common ones it can actually produce, plus its own.
 * The contract never declares a status the runtime cannot answer (no input → no 400; no
 * capped meter → no 402 from admission).
 */
export function operationErrorCodes(op: AnyOperation): ErrorCode[] {
  const takesInput = Boolean(op.request.params || op.request.query || op.request.body || op.headers?.length);
  // Every operation refuses a query parameter (and a body field) it does not define, and (the app's
  // input guard, ./input-guard.ts) a control character in its path or query string.
  const closed: ErrorCode[] = ['unknown_field', 'invalid_characters'];
  const capped = op.meter !== null && !CAP_EXEMPT_OPERATIONS.has(op.operationId);
  const common = (op.scope === null ? COMMON_ERRORS_PUBLIC : COMMON_ERRORS_SCOPED).filter(
    (code) => (code !== 'invalid_request' || takesInput) && (code !== 'plan_limit_reached' || capped),
  );
  // A body that is not JSON, not sent as application/json (app.ts maps both), or over the limit
  // (the limit applies to every POST, with or without a declared body).
  const body: ErrorCode[] = op.request.body ? ['invalid_json', 'unsupported_media_type'] : [];
  const limit: ErrorCode[] = op.method === 'post' ? ['payload_too_large'] : [];
  // Any other method on the operation's path answers 405 with `Allow` (app.ts).
  const method: ErrorCode[] = ['method_not_allowed'];
  // A grant-scoped call writes (its grant's use, its admission), so a full store refuses it.
  const store: ErrorCode[] = op.scope !== null ? ['store_full'] : [];
  return [...new Set<ErrorCode>([...common, ...closed, ...body, ...limit, ...method, ...store, ...op.errors])];
}

const declaredSets = new WeakMap<AnyOperation, ReadonlySet<ErrorCode>>();

/** Reports `code` when `op` does not declare it (see the file comment). */
export function reportUndeclaredError(
  op: AnyOperation,
  code: ErrorCode,
  services: Services,
  transport: 'http' | 'mcp',
): void {
  let declared = declaredSets.get(op);
  if (!declared) {
    declared = new Set(operationErrorCodes(op));
    declaredSets.set(op, declared);
  }
  if (declared.has(code)) return;
  services.log?.error(
    { operation_id: op.operationId, code, transport },
    `${op.operationId} answered ${code}, which its contract does not declare`,
  );
  services.hooks.undeclaredError?.({ operation_id: op.operationId, code, transport });
}
