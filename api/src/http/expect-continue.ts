// `Expect: 100-continue` (RFC 9110 §10.1.1): a client asks before uploading the body. Node answers
// `100 Continue` to every such request unless the server handles 'checkContinue', which would
// invite a client to upload a body that is then refused. Flowport decides from the request line
// and headers alone: a declared Content-Length over the limit of the route it is for gets 413
// `payload_too_large` at once, with no 100 and the connection closed (the body is never read);
// (intake answers it itself, with a receipt); anything else gets its 100 and is served as usual.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Config } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { newId } from '../ids.ts';
import { AGENT_API_PREFIX, COMPLIANCE_WEBHOOK_PATH, INGEST_PATH_PREFIX, MCP_PATH } from '../lib/package-info.ts';
import { AGENT_API_MAX_BODY_BYTES } from './agent-router.ts';
import { problemParts } from './problem-response.ts';

/** The largest body the route at `path` reads, or null when it sets no limit of its own. */
export function bodyLimitFor(path: string, config: Pick<Config, 'intake'>): number | null {
  if (path.startsWith(`${INGEST_PATH_PREFIX}/`) || path.startsWith(COMPLIANCE_WEBHOOK_PATH))
    return config.intake.maxBodyBytes;
  if (path === MCP_PATH || path.startsWith(`${MCP_PATH}/`)) return null;
  if (path === AGENT_API_PREFIX || path.startsWith(`${AGENT_API_PREFIX}/`)) return AGENT_API_MAX_BODY_BYTES;
  return null;
}

export function installExpectContinue(server: Server, config: Pick<Config, 'intake' | 'publicUrl'>): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const limit = bodyLimitFor(path, config);
    const declared = Number(req.headers['content-length']);
    if (limit !== null && Number.isFinite(declared) && declared > limit) {
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
