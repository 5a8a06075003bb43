// Intake requests and the bodies they read. An intake request marks its socket from the moment it
// arrives, and its body read registers there while it runs, so when Node reports the connection
// as failed (the request timeout expired, or its framing broke mid-body: a `clientError`,
// ./client-error.ts), the intake path answers rather than the raw socket handler: problem+json
// with a receipt, through the request's own response, which keeps the answers of pipelined
// requests in order. A failure reported before the read has started (the endpoint was still being
// looked up) is kept for the read, which then fails at once. ADR 0307.
import type { AppError } from '../errors/problem.ts';

/**
 * What the socket's current intake request is doing, kept on the socket itself (a property store
 * costs the hot path less than a WeakMap entry; bench:instructions, ADR 0307):
 * - the request object: it has arrived and not read its body yet;
 * - a function: its body is being read; call it to fail the read;
 * - an EarlyFailure: the connection failed before the read started.
 */
const STATE = Symbol('flowport.intakeRequest');
/** Set once an intake request answers for a failed connection: later errors on it are not answered again. */
const ANSWERING = Symbol('flowport.answering');
type OnFail = (err: AppError) => void;
/** The connection of `request` failed before its body read started. */
class EarlyFailure {
  readonly request: object;
  readonly err: AppError;
  constructor(request: object, err: AppError) {
    this.request = request;
    this.err = err;
  }
}
type State = object | OnFail | EarlyFailure | undefined;
type Tracked = { [STATE]?: State; [ANSWERING]?: true };

function failedEarly(state: State): state is EarlyFailure {
  return state instanceof EarlyFailure;
}

/** Marks `socket` as carrying the intake request `request` (its IncomingMessage) from its arrival. */
export function startIntakeRequest(socket: object, request: object): void {
  (socket as Tracked)[STATE] = request;
}

/** The intake request `request` has answered; its mark ends unless a later request replaced it. */
export function endIntakeRequest(socket: object, request: object): void {
  const state = (socket as Tracked)[STATE];
  if (state === request || (failedEarly(state) && state.request === request)) (socket as Tracked)[STATE] = undefined;
}

/**
 * Registers `onFail` while a request body is read from `socket`; endBodyRead ends it (call it
 * however the read ends). Returns the error when the connection already failed before the read
 * started: the read should fail with it at once. HTTP/1.1 reads one body after another on a
 * connection, but a pipelined request's read can start before the previous read's end is handled,
 * so each read ends only its own registration.
 */
export function startBodyRead(socket: object, onFail: OnFail): AppError | null {
  const state = (socket as Tracked)[STATE];
  if (failedEarly(state)) {
    (socket as Tracked)[STATE] = undefined;
    return state.err;
  }
  (socket as Tracked)[STATE] = onFail;
  return null;
}

export function endBodyRead(socket: object, onFail: OnFail): void {
  if ((socket as Tracked)[STATE] === onFail) (socket as Tracked)[STATE] = undefined;
}

/**
 * Hands `err` to the socket's intake request: to its body read if one runs, else kept for the
 * read to come. Marks the connection as answered by that request (its answer closes the
 * connection). False when the socket carries no intake request.
 */
export function failBodyRead(socket: object, err: AppError): boolean {
  const state = (socket as Tracked)[STATE];
  if (state === undefined || failedEarly(state)) return false;
  (socket as Tracked)[ANSWERING] = true;
  if (typeof state === 'function') {
    (socket as Tracked)[STATE] = undefined;
    (state as OnFail)(err);
  } else {
    (socket as Tracked)[STATE] = new EarlyFailure(state, err);
  }
  return true;
}

/** True once an intake request answers for this connection's failure (failBodyRead). */
export function answeredByBodyRead(socket: object): boolean {
  return (socket as Tracked)[ANSWERING] === true;
}
