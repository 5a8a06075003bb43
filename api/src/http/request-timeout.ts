// The request timeout: how long a client has to send a whole request (config.http.requestTimeoutMs).
// Node enforces it (`requestTimeout`, checked every `connectionsCheckingInterval`) and reports an
// expired request as a `clientError` (./client-error.ts), which answers 408 `request_timeout`
// (an intake body being read: through the intake path, ./body-reads.ts). ADR 0307.
import type { ServerOptions } from 'node:http';
import type { Config } from '../config.ts';
import { AppError } from '../errors/problem.ts';

/**
 * Options for every server that answers with Runtime.listener. Node checks the deadlines every
 * `connectionsCheckingInterval` (its default, 30 s, would let a 30 s timeout run to a minute), so
 * a request is refused between one timeout and a tenth of one (at most 1 s) after it started.
 */
export function httpServerOptions(config: Pick<Config, 'http'>): ServerOptions {
  const timeout = config.http.requestTimeoutMs;
  return {
    requestTimeout: timeout,
    headersTimeout: Math.min(60_000, timeout),
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(timeout / 10))),
  };
}

/** The refusal of a request that did not arrive whole within `timeoutMs`. */
export function requestTimeoutError(timeoutMs: number): AppError {
  const limit = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`;
  return new AppError('request_timeout', {
    detail: `The whole request (headers and body) did not arrive within ${limit}, this server's request timeout. It was not processed, and the connection is closed.`,
  });
}
