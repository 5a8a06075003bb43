// Requests Node's HTTP parser refuses before any route sees them (malformed framing, headers
// over the size limit, a request that took too long to arrive). Without a handler Node answers
// a bare status line with no body; Flowport answers problem+json with a catalog code and its
// docs URL like every other refusal, then closes the connection (its framing can no longer be
// trusted). An intake body that fails while it is read (timeout, broken framing) is answered
// by the intake path instead (./body-reads.ts), with a receipt. Every server that answers with
// Runtime.listener installs it, with the options of httpServerOptions.
import { type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors/problem.ts';
import { newId } from '../ids.ts';
import { problemParts } from './problem-response.ts';
import { answeredByBodyRead, failBodyRead } from './body-reads.ts';
import { requestTimeoutError } from './request-timeout.ts';

/** Node's parser error codes (llhttp `HPE_*`) and timeouts, as a status Flowport answers. */
function appErrorFor(err: NodeJS.ErrnoException, server: Server): AppError | null {
  const code = err.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') return new AppError('headers_too_large');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return requestTimeoutError(server.requestTimeout);
  if (code.startsWith('HPE_')) {
    return new AppError('malformed_http', { detail: `The request could not be parsed as HTTP/1.1 (${code}).` });
  }
  return null;
}

/** How long a refused connection may stay half-open after its answer before it is destroyed. */
const LINGER_MS = 5_000;
/** How long an intake request whose body read failed has to answer (a receipt's commit) before its connection is dropped. */
const ANSWER_WITHIN_MS = 30_000;

export function installClientErrorHandler(server: Server, publicUrl: string): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // An intake request whose body was being read answers for the connection, then closes it;
    // until then a broken parser may report each further chunk, which is not answered again.
    if (answeredByBodyRead(socket)) return;
    const appError = appErrorFor(err, server);
    // Checked before the test below, which would drop a keep-alive connection that already
    // carried an earlier answer. The timer bounds a connection whose answer never comes.
    if (appError !== null && failBodyRead(socket, appError)) {
      setTimeout(() => socket.destroy(), ANSWER_WITHIN_MS).unref();
      return;
    }
    // As Node's default: answer only a connection nothing was written on yet (a response to an
    // earlier request could still be on its way, and bytes written now would interleave with it).
    if (
      err.code === 'ECONNRESET' ||
      !socket.writable ||
      (socket as Duplex & { bytesWritten: number }).bytesWritten > 0
    ) {
      socket.destroy();
      return;
    }
    // The client gets time to read the answer; one that never closes its side does not keep the socket.
    const answer = (raw: string) => {
      socket.end(raw);
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
    if (appError === null) {
      socket.destroy();
      return;
    }
    const p = problemParts(appError, { publicUrl, requestId: newId('request') });
    const head = [`HTTP/1.1 ${p.status} ${STATUS_CODES[p.status] ?? 'Bad Request'}`];
    for (const [k, v] of Object.entries(p.headers)) head.push(`${k}: ${v}`);
    head.push(`Content-Length: ${Buffer.byteLength(p.body)}`, 'Connection: close');
    answer(`${head.join('\r\n')}\r\n\r\n${p.body}`);
  });
}
