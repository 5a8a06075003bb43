// Request bodies being read for sender intake. A read registers itself on its socket while it
// runs, so when Node reports that request's connection as failed (the request timeout expired, or
// its framing broke mid-body: a `clientError`, ./client-error.ts), the intake path answers it
// rather than the raw socket handler: problem+json with a receipt, through the request's own
// response, which keeps the answers of pipelined requests in order. ADR 0307.
import type { AppError } from '../errors/problem.ts';

/**
 * The failure handler of the intake body being read from a socket, kept on the socket itself: a
 * property store costs the hot path less than a WeakMap entry (bench:instructions, ADR 0307).
 */
const BODY_READ = Symbol('flowport.bodyRead');
/** Set once a failed read's request answers for the connection: later errors on it are not answered again. */
const ANSWERING = Symbol('flowport.answering');
type OnFail = (err: AppError) => void;
type Tracked = { [BODY_READ]?: OnFail | undefined; [ANSWERING]?: true };

/**
 * Registers `onFail` while a request body is read from `socket`; endBodyRead ends it (call it
 * however the read ends). HTTP/1.1 reads one body after another on a connection, but a pipelined
 * request's read can start before the previous read's end is handled, so each read ends only its
 * own registration.
 */
export function startBodyRead(socket: object, onFail: OnFail): void {
  (socket as Tracked)[BODY_READ] = onFail;
}

export function endBodyRead(socket: object, onFail: OnFail): void {
  if ((socket as Tracked)[BODY_READ] === onFail) (socket as Tracked)[BODY_READ] = undefined;
}

/**
 * Ends the body read registered for `socket` with `err`, and marks the connection as answered by
 * that read's request (its answer closes the connection); false when no read is registered.
 */
export function failBodyRead(socket: object, err: AppError): boolean {
  const onFail = (socket as Tracked)[BODY_READ];
  if (onFail === undefined) return false;
  (socket as Tracked)[BODY_READ] = undefined;
  (socket as Tracked)[ANSWERING] = true;
  onFail(err);
  return true;
}

/** True once a failed read's request answers for this connection (failBodyRead). */
export function answeredByBodyRead(socket: object): boolean {
  return (socket as Tracked)[ANSWERING] === true;
}
