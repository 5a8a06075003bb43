// The core floor: the types every layer shares. Who is calling (Principal), what a
// process provides (Services), what an operation runs with (OperationContext), the
// guard and admission contracts, and the shape of one Agent Operations operation.
// Everything else — Hono routes, the OpenAPI file, MCP tools, CLI commands, reference
// pages — is derived from a list of these (see ../operations/registry.ts).
// This module imports nothing above it: only foundation types (config, errors, lib) and
// the store's Db (and the store-floor observability types). tests/architecture/layers.test.ts keeps it so.
import type { z } from 'zod';
import type { Logger } from '../observability/log.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Config } from '../config.ts';
import type { SecretBox } from '../lib/crypto.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { Db } from '../store/db.ts';
import type { ShopLimitsRow } from '../store/tables/shops.ts';

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';

/** Tool families (MCP grouping, docs grouping). */
export type Family = 'docs' | 'events' | 'setup' | 'recovery' | 'account';

/**
 * What the operation does to the world. Annotations, metering defaults and the
 * security suite derive from it: `read` never changes state; `preview` records
 * an intent but changes nothing else; `execute` performs a side effect.
 */
export type OperationKind = 'read' | 'preview' | 'execute';

export type Meter = 'simple_read' | 'rich_read' | 'preview' | 'execution';

/** The authenticated party behind a request (filled by the auth layer). */
export interface Principal {
  grantId: string;
  shopId: string;
  scopes: readonly string[];
  actor: { kind: 'agent' | 'human'; name: string; client?: string | null };
  tier: string;
  expiresAt: number;
  /** OAuth access tokens only: the resource (RFC 8707 audience) the token was issued for. */
  resource?: string;
  /** The call is not yet counted as the grant's use: the next write for it does so (usage/grant-use.ts). */
  useDeferred?: boolean;
  /** The shop's row as far as its limits go, read with the grant when it was authenticated (admission uses it). */
  shopLimits?: ShopLimitsRow;
  /** What event reads show of the shop, read with the grant when it was authenticated (ShopFacts). */
  shopState?: { connectionStatus: string; replaysUsed: number; period: string };
}

/** Long-lived parts every operation may use. Built once per process. */
export interface Services {
  config: Config;
  db: Db;
  /** Encrypts and decrypts secrets at rest. */
  secrets: SecretBox;
  /** Milliseconds since epoch; tests may substitute a clock. */
  now(): number;
  /** Operations registered in this process (the manifest lists them). */
  registry(): readonly AnyOperation[];
  /** Optional hooks filled by later subsystems (worker kick, etc.). */
  hooks: ServiceHooks;
  /** This process's Prometheus metrics (api/src/observability/metrics.ts); absent in bare test services. */
  metrics?: Metrics;
  /** This process's structured logger (api/src/observability/log.ts); absent in bare test services. */
  log?: Logger;
}

export interface ServiceHooks {
  /** Wake the delivery worker (new due events). */
  kickWorker?: () => void;
  /** An endpoint's status, config or secret changed in this process: drop what intake cached about it. */
  endpointChanged?: (endpointId: string) => void;
  /** Wake this process's bulk replay runner (a bulk replay was confirmed). */
  kickBulkReplay?: () => void;
  /** An operation answered a code its contract does not declare (api/src/http/declared-errors.ts). */
  undeclaredError?: (report: { operation_id: string; code: string; transport: 'http' | 'mcp' }) => void;
}

interface ContextBase {
  services: Services;
  requestId: string;
  transport: 'http' | 'mcp' | 'cli';
  /** Request headers the operation declared (lowercased names). */
  headers: Record<string, string | undefined>;
  /**
   * Set by a domain verb that wrote this call's audit entry itself (the intent engine: one entry
   * per step, named `<kind>.<step>`): the guard then writes none, so a step is audited once.
   */
  audited?: { done: boolean };
}

/**
 * What an operation that needs a grant runs with. The pipeline authenticates before `run`, so the
 * principal is always there: no domain verb checks for it again.
 */
export interface OperationContext extends ContextBase {
  principal: Principal;
}

/** What a public operation (scope null: manifest, docs, the contract) runs with: no principal. */
export interface PublicContext extends ContextBase {
  principal: null;
}

/** Implemented by the auth subsystem (api/src/auth/guard.ts); installed with installGuard (api/src/operations/pipeline.ts). */
export interface Guard {
  /** Resolves a bearer token to a principal or throws an `authority`-layer AppError. */
  authenticate(
    token: string | null,
    services: Services,
    requestId?: string,
    options?: { deferUse?: boolean },
  ): Promise<Principal>;
  /** Throws a refusal naming the missing scope. */
  authorize(principal: Principal, op: AnyOperation, services?: Services, requestId?: string): void | Promise<void>;
  /**
   * Rate limits, plan caps and metering; throws `usage`-layer refusals. Returns an Admission when
   * what it counted is to be given back if the operation then refuses or fails.
   */
  admit(principal: Principal, op: AnyOperation, services: Services, requestId?: string): Promise<Admission | undefined>;
  /** Actor attribution after run: audits refusals and non-read operations (see api/src/auth/guard.ts). */
  record?(args: {
    principal: Principal;
    op: AnyOperation;
    services: Services;
    requestId: string;
    input: Record<string, unknown>;
    error?: unknown;
    /** The operation's verb already audited this call (OperationContext.audited). */
    audited?: boolean;
  }): Promise<void>;
}

/** What admission counted for a call that the operation may still refuse (a preview). */
export interface Admission {
  /** Gives the counted unit back (the operation refused or failed; nothing was created). */
  refund(): Promise<void>;
}

export interface OperationRequest {
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodObject;
}

type Infer<T> = T extends z.ZodType ? z.infer<T> : Record<never, never>;

export type OperationInput<R extends OperationRequest> = Infer<R['params']> & Infer<R['query']> & Infer<R['body']>;

export interface Operation<
  R extends OperationRequest = OperationRequest,
  O extends z.ZodType = z.ZodType,
  S extends string | null = string | null,
> {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI path template, e.g. `/agent/v1/events/{event_id}`. */
  path: string;
  summary: string;
  description: string;
  family: Family;
  kind: OperationKind;
  /** Required scope; null = public (no grant needed, and `run` gets no principal). */
  scope: S;
  /**
   * When `scope` only admits the call and the authority that decides depends on the target
   * (confirming an intent needs its kind's execute scope): what a grant really needs, said
   * wherever the scope is shown (manifest, MCP tool description).
   */
  scopeNote?: string;
  /**
   * Scopes of which the grant must also hold one (besides `scope`) for the call to succeed on
   * some target: the OpenAPI security alternatives, the manifest's `scope_any_of`, `flowport doctor`.
   */
  scopeAnyOf?: readonly string[];
  meter: Meter | null;
  /** True when execution destroys data (MCP destructiveHint). */
  destructive?: boolean;
  /** An execution with no further effect when repeated (MCP idempotentHint), e.g. cancelling an intent. */
  idempotent?: boolean;
  /** True when the operation can start work in Shopify Flow (MCP openWorldHint). */
  openWorld?: boolean;
  /** Request headers the operation reads (lowercase). */
  headers?: readonly string[];
  request: R;
  response: O;
  successStatus?: 200 | 201 | 202;
  /** Error codes this operation can return beyond the common ones for its scope. */
  errors: readonly ErrorCode[];
  /** MCP tool name and job-language description; null = not an MCP tool. */
  mcp: { name: string; title: string; description: string } | null;
  /** CLI command words, e.g. ['list-events']; null = not in the CLI. */
  cli: readonly string[] | null;
  run(args: { ctx: S extends null ? PublicContext : OperationContext; input: OperationInput<R> }): Promise<z.infer<O>>;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds operations of every input/output type.
export type AnyOperation = Operation<any, any, any>;

/** Identity helper that keeps each operation's input and output types precise. */
export function defineOperation<R extends OperationRequest, O extends z.ZodType, S extends string | null>(
  op: Operation<R, O, S>,
): Operation<R, O, S> {
  return op;
}
