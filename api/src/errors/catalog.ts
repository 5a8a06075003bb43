// The error catalog: every stable error code the product can emit, once.
// HTTP status, refusal layer, retry advice and docs page are all derived from here.
// Codes are declared per area in ./codes/*.ts and merged here; add a code there
// and its docs page, OpenAPI schema enum and tests follow.
import { API_ERRORS } from './codes/api.ts';
import { AUTH_ERRORS } from './codes/auth.ts';
import { USAGE_ERRORS } from './codes/usage.ts';
import { INTAKE_ERRORS } from './codes/intake.ts';
import { HANDOFF_ERRORS } from './codes/handoff.ts';
import { INTENT_ERRORS } from './codes/intent.ts';
import { MCP_ERRORS } from './codes/mcp.ts';
import { OAUTH_ERRORS } from './codes/oauth.ts';
import { FLOW_LIFECYCLE_ERRORS, SHOPIFY_ERRORS } from './codes/shopify.ts';

export type RefusalLayer = 'capability' | 'authority' | 'usage' | 'target_state' | 'safety' | 'product_boundary';

/** Who should retry after this error, if anyone. */
export type RetryAdvice = 'no' | 'sender' | 'client' | 'worker';

/**
 * A step that fixes one code, named by the catalog so every surface shows it before the generic
 * ones (issue 43, item 6): send a field again (the CLI prints its flag), call an operation (by
 * operationId; the CLI prints its command, MCP clients call its tool), or have the merchant act
 * on the merchant page.
 */
export type FixStep =
  | { kind: 'retry_with'; field: string; value: string | number | boolean; description: string }
  | { kind: 'call'; operation: string; description: string }
  | { kind: 'merchant_page'; description: string };

/**
 * Who meets a code, and where:
 * - `call`: the answer to a call the reader made (an HTTP response, an MCP `isError` tool result,
 *   a CLI error); with a `layer`, a refusal of that call.
 * - `event`: a state of an event: Shopify's or Flow's answer to Flowport's delivery, recorded as
 *   the event's and its attempts' `error_code`. No API call is refused with it.
 * - `sender`: Flowport's answer to a sender's webhook, recorded on its refused receipt.
 */
export type ErrorAnswers = 'call' | 'event' | 'sender';

export interface ErrorDef {
  status: number;
  title: string;
  /** Present when the error is a refusal (an action outside authority, limits or safety). */
  layer?: RefusalLayer;
  retry: RetryAdvice;
  /** Teaching text for the docs page: what happened and what to do. */
  description: string;
  fix: string;
  /** The steps that fix this code, most useful first; shown before the generic next steps. */
  steps?: readonly FixStep[];
  /** Who meets it (ErrorAnswers), in the order the docs say it; absent = `['call']`. */
  answers?: readonly ErrorAnswers[];
  /** Which surface emits it (for grouping docs pages). */
  area: 'api' | 'intake' | 'handoff' | 'auth' | 'usage' | 'intent' | 'mcp' | 'shopify';
}

export const ERROR_CATALOG = {
  ...API_ERRORS,
  ...AUTH_ERRORS,
  ...USAGE_ERRORS,
  ...INTAKE_ERRORS,
  ...HANDOFF_ERRORS,
  ...INTENT_ERRORS,
  ...MCP_ERRORS,
  ...OAUTH_ERRORS,
  ...SHOPIFY_ERRORS,
  ...FLOW_LIFECYCLE_ERRORS,
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export function errorDef(code: ErrorCode): ErrorDef {
  return ERROR_CATALOG[code];
}

/** Who meets this code: the answer to a call, a state of an event, or Flowport's answer to a sender. */
export function errorAnswers(code: ErrorCode): readonly ErrorAnswers[] {
  return (ERROR_CATALOG[code] as ErrorDef).answers ?? ['call'];
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, value);
}
