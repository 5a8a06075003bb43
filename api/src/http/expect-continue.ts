// `Expect: 100-continue` (RFC 9110 §10.1.1): a client asks before uploading the body. Node answers
// `100 Continue` to every such request unless the server handles 'checkContinue', which would
// invite a client to upload a body that is then refused. Flowport decides from the request line
// and headers alone: a declared Content-Length over the limit of the route it is for (the one
// table, ./input-guard.ts) gets 413
// `payload_too_large` at once, with no 100 and the connection closed (the body is never read);
// (intake answers it itself, with a receipt); anything else gets its 100 and is served as usual.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Config } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { newId } from '../ids.ts';
import { INGEST_PATH_PREFIX } from '../lib/package-info.ts';
import { bodyLimitFor } from './input-guard.ts';
import { problemParts } from './problem-response.ts';

export function installExpectContinue(server: Server, config: Pick<Config, 'intake' | 'publicUrl'>): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const limit = bodyLimitFor(path, config).maxBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      // Intake refuses a declared length over its limit before reading a byte, and writes the
      // sender a receipt: it answers, without the 100.
      if (path.startsWith(`${INGEST_PATH_PREFIX}/`)) {
        server.emit('request', req, res);
        return;
      }
      const p = problemParts(
        new AppError('payload_too_large', {
          detail: `The declared body (${declared} bytes) is larger than this route's limit of ${limit} bytes; it was not read.`,
        }),
        { publicUrl: config.publicUrl, requestId: newId('request') },
      );
      res.writeHead(p.status, { ...p.headers, 'Content-Length': Buffer.byteLength(p.body), Connection: 'close' });
      res.end(p.body);
      return;
    }
    res.writeContinue();
    server.emit('request', req, res);
  });
}
