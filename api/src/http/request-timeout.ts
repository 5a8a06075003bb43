// The request timeout: how long a client has to send a whole request (config.http.requestTimeoutMs).
// Node enforces it (`requestTimeout`, checked every `connectionsCheckingInterval`) and reports an
// expired request as a `clientError` (./client-error.ts). A body being read for sender intake is
// registered here while it is read, so the intake path, not the raw socket handler, answers the
// timeout: 408 `request_timeout` as problem+json, with a receipt, through the request's own
// response (which keeps the answers of pipelined requests in order).
import type { ServerOptions } from 'node:http';
import type { Config } from '../config.ts';

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

/** Sockets whose request body is being read for intake, and what to call when it times out. */
const reading = new WeakMap<object, () => void>();

/**
 * Registers `onTimeout` while a request body is read from `socket`; returns the function that
 * ends the registration (call it however the read ends). One read at a time per socket: HTTP/1.1
 * reads one request body after another.
 */
export function whileReadingBody(socket: object, onTimeout: () => void): () => void {
  reading.set(socket, onTimeout);
  return () => {
    if (reading.get(socket) === onTimeout) reading.delete(socket);
  };
}

/** Ends the body read registered for `socket` as timed out; false when none is registered. */
export function timeOutBodyRead(socket: object): boolean {
  const onTimeout = reading.get(socket);
  if (onTimeout === undefined) return false;
  reading.delete(socket);
  onTimeout();
  return true;
}
