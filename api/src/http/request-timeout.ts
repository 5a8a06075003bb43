// The request timeout: how long a client has to send a whole request (config.http.requestTimeoutMs).
// Node enforces it (`requestTimeout`, checked every `connectionsCheckingInterval`) and reports an
// expired request as a `clientError` (./client-error.ts). A body being read for sender intake is
// registered here while it is read, so the intake path, not the raw socket handler, answers the
// timeout: 408 `request_timeout` as problem+json, with a receipt, through the request's own
// response (which keeps the answers of pipelined requests in order).
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

/**
 * The timeout handler of the intake body being read from a socket, kept on the socket itself: a
 * property store costs the hot path less than a WeakMap entry (bench:instructions, ADR 0307).
 */
const BODY_READ = Symbol('flowport.bodyRead');
type OnTimeout = (err: AppError) => void;
type Reading = { [BODY_READ]?: OnTimeout | undefined };

/**
 * Registers `onTimeout` while a request body is read from `socket`; endBodyRead ends it (call it
 * however the read ends). HTTP/1.1 reads one body after another on a connection, but a pipelined
 * request's read can start before the previous read's end is handled, so each read ends only its
 * own registration.
 */
export function startBodyRead(socket: object, onTimeout: OnTimeout): void {
  (socket as Reading)[BODY_READ] = onTimeout;
}

export function endBodyRead(socket: object, onTimeout: OnTimeout): void {
  if ((socket as Reading)[BODY_READ] === onTimeout) (socket as Reading)[BODY_READ] = undefined;
}

/** The refusal of a request that did not arrive whole within `timeoutMs`. */
export function requestTimeoutError(timeoutMs: number): AppError {
  const limit = timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`;
  return new AppError('request_timeout', {
    detail: `The whole request (headers and body) did not arrive within ${limit}, this server's request timeout. It was not processed, and the connection is closed.`,
  });
}

/** Ends the body read registered for `socket` with `err`; false when none is registered. */
export function timeOutBodyRead(socket: object, err: AppError): boolean {
  const onTimeout = (socket as Reading)[BODY_READ];
  if (onTimeout === undefined) return false;
  (socket as Reading)[BODY_READ] = undefined;
  onTimeout(err);
  return true;
}
