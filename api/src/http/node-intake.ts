// The sender-facing hot path on Node's own request objects: `POST /in/<endpoint_id>`
// is answered here without building web Request/Response objects or streams (they
// cost more than the intake work itself; see docs/adr/0301-intake-fast-path.md).
// Everything else, including odd intake URLs, goes to the Hono app, which answers
// the same codes (./routes.ts).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../errors/problem.ts';
import { problemParts } from './problem-response.ts';
import { answeredByBodyRead, endBodyRead, endIntakeRequest, startBodyRead, startIntakeRequest } from './body-reads.ts';
import { isId, newId } from '../ids.ts';
import { INGEST_PATH_PREFIX } from '../lib/package-info.ts';
import { ACK_HTTP_STATUS, BODY_NEVER_WHOLE } from '../errors/codes/intake.ts';
import { type HeaderReader, type Intake, SenderGoneError } from '../intake/intake.ts';
import { INTAKE_LIMITS } from '../intake/limits.ts';

type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Refusals after which the rest of the request is not read: the connection closes (routes.ts too). */
export const CLOSES_CONNECTION: ReadonlySet<string> = new Set(['payload_too_large', ...BODY_NEVER_WHOLE]);

const PREFIX = `${INGEST_PATH_PREFIX}/`;

/**
 * Fields Node keeps only the first of when repeated (`IncomingMessage.headers`); web Headers, which
 * the Hono route reads, joins every value. Node's list, so one request gets one answer on both paths.
 */
const NODE_FIRST_ONLY = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** Every value of a repeated `name` in rawHeaders joined like web Headers; null when it appears once. */
function repeatedRaw(rawHeaders: string[], name: string): string | null {
  let joined: string | null = null;
  let first: string | null = null;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const key = rawHeaders[i] as string;
    if (key.length !== name.length || key.toLowerCase() !== name) continue;
    const value = rawHeaders[i + 1] as string;
    if (first === null) first = value;
    else joined = `${joined ?? first}, ${value}`;
  }
  return joined;
}

/** Node's headers (already lower-cased) as a HeaderReader that reads repeated fields like web Headers. */
class NodeHeaderReader implements HeaderReader {
  private readonly headers: IncomingHttpHeaders;
  private readonly rawHeaders: string[];
  constructor(headers: IncomingHttpHeaders, rawHeaders: string[]) {
    this.headers = headers;
    this.rawHeaders = rawHeaders;
  }
  get(name: string): string | null {
    const v = this.headers[name];
    if (v === undefined) return null;
    if (Array.isArray(v)) return v.join(', ');
    return NODE_FIRST_ONLY.has(name) ? (repeatedRaw(this.rawHeaders, name) ?? v) : v;
  }
  has(name: string): boolean {
    return this.headers[name] !== undefined;
  }
}

/** Node's headers as a HeaderReader: one object per request, its methods shared (no closures per request). */
export function nodeHeaders(headers: IncomingHttpHeaders, rawHeaders: string[] = []): HeaderReader {
  return new NodeHeaderReader(headers, rawHeaders);
}

/**
 * Reads the body, refusing (payload_too_large) past `max` bytes without buffering the rest, and
 * with the error of a failure the server reports for the connection first (request_timeout,
 * malformed_http: ../http/body-reads.ts); SenderGoneError when the connection closes first (also
 * before this was called).
 */
export function readNodeBody(req: IncomingMessage, max: number): Promise<Uint8Array> {
  const tooLarge = () =>
    new AppError('payload_too_large', { detail: `The body is larger than the intake limit of ${max} bytes.` });
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > max) return Promise.reject(tooLarge());
  if (req.destroyed) return Promise.reject(new SenderGoneError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > max) {
        cleanup();
        // Stop buffering; the rest is read and dropped so the 413 can still be written.
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    // An aborted request emits 'error' ("aborted") and 'close' without 'end'.
    const onGone = () => {
      cleanup();
      reject(new SenderGoneError());
    };
    const onFail = (err: AppError) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      endBodyRead(req.socket, onFail);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
    const early = startBodyRead(req.socket, onFail);
    if (early) onFail(early);
  });
}

/** The endpoint id of `POST /in/<id>` (no query, no trailing parts), or null for anything else. */
function fastPathEndpoint(req: IncomingMessage): string | null {
  if (req.method !== 'POST') return null;
  const url = req.url ?? '';
  if (!url.startsWith(PREFIX)) return null;
  const id = url.slice(PREFIX.length);
  return isId('endpoint', id) ? id : null;
}

/**
 * Wraps the app's listener: intake POSTs are handled here, the rest by `next`.
 * `log` receives unexpected errors (never request bodies or headers).
 */
export function withIntakeFastPath(
  intake: () => Intake,
  publicUrl: string,
  next: NodeListener,
  log: (message: string) => void,
  /** Told each answered intake request's status and duration (seconds): metrics and the request log. */
  answered?: (
    status: number,
    seconds: number,
    requestId: string,
    endpointId: string,
    code: string | null,
    eventId: string | null,
  ) => void,
): NodeListener {
  return (req, res) => {
    const endpointId = fastPathEndpoint(req);
    if (endpointId === null) {
      // Other intake URLs (a query string, say) are read by the Hono route (./routes.ts): marked
      // here too, so a failure before its body read starts still reaches it.
      if (req.method === 'POST' && req.url?.startsWith(PREFIX)) {
        startIntakeRequest(req.socket, req);
        res.once('close', () => endIntakeRequest(req.socket, req));
      }
      next(req, res);
      return;
    }
    const requestId = newId('request');
    const started = answered ? performance.now() : 0;
    startIntakeRequest(req.socket, req);
    const send = (
      status: number,
      headers: Record<string, string>,
      body: string,
      close = false,
      code: string | null = null,
      eventId: string | null = null,
    ) => {
      endIntakeRequest(req.socket, req);
      answered?.(status, (performance.now() - started) / 1000, requestId, endpointId, code, eventId);
      if (res.headersSent || res.destroyed) return;
      // Node reads and discards an unread body before the next request on this connection. An
      // oversized one is not worth reading, nor is a long or chunked one left unread by an early
      // refusal (unknown, paused or archived endpoint): that connection closes instead. So does
      // one whose request timed out or whose framing broke (answeredByBodyRead).
      if (
        close ||
        (!req.complete && !(Number(req.headers['content-length']) <= INTAKE_LIMITS.drainUnreadBodyBytes)) ||
        answeredByBodyRead(req.socket)
      )
        headers.Connection = 'close';
      // The headers object is this answer's own (made per call): completed in place, not copied.
      headers['Content-Length'] = String(Buffer.byteLength(body));
      headers['X-Request-Id'] = requestId;
      res.writeHead(status, headers);
      res.end(body);
    };
    intake()
      .handle({
        endpointId,
        requestId,
        headers: nodeHeaders(req.headers, req.rawHeaders),
        readBody: (max) => readNodeBody(req, max),
      })
      .then(
        (ack) =>
          send(
            ACK_HTTP_STATUS[ack.status],
            { 'Content-Type': 'application/json' },
            JSON.stringify(ack),
            false,
            null,
            'event_id' in ack ? ack.event_id : null,
          ),
        (err: unknown) => {
          if (err instanceof SenderGoneError) return;
          let appError: AppError;
          if (err instanceof AppError) appError = err;
          else {
            log(`[${requestId}] intake failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}`);
            appError = new AppError('internal_error');
          }
          const p = problemParts(appError, { publicUrl, requestId, instance: req.url ?? PREFIX });
          send(p.status, p.headers, p.body, CLOSES_CONNECTION.has(appError.code), appError.code);
        },
      );
  };
}
