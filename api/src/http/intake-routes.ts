// POST /in/{endpoint_id}: the sender-facing HTTP surface of intake. Answers 202
// { event_id, receipt_id, status } after the group commit, 200 for a duplicate,
// and problem+json with an intake code for every failure. On Node the fast path in
// ./node-intake.ts answers well-formed intake URLs first; this route serves the rest.
import { Hono } from 'hono';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from './types.ts';
import { endBodyRead, startBodyRead } from './body-reads.ts';
import { isId } from '../ids.ts';
import { ACK_HTTP_STATUS } from '../errors/codes/intake.ts';
import { type Intake, type IntakeAck, SenderGoneError } from '../intake/intake.ts';
import { CLOSES_CONNECTION } from './node-intake.ts';

/**
 * Reads a request body with a hard cap, without buffering past it. With the `socket` it arrives
 * on, a failure the server reports for that connection (the request timeout, broken framing) ends
 * the read with its error (../http/body-reads.ts; node-intake.ts does the same).
 */
export async function readBodyCapped(req: Request, max: number, socket?: object): Promise<Uint8Array> {
  const declared = req.headers.get('content-length');
  const tooLarge = () =>
    new AppError('payload_too_large', { detail: `The body is larger than the intake limit of ${max} bytes.` });
  if (declared !== null && Number(declared) > max) throw tooLarge();
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  let failed: AppError | null = null;
  const onFail = (err: AppError) => {
    failed = err;
    // Settles the pending read (done), so the loop below sees the failure.
    reader.cancel().catch(() => {});
  };
  const early = socket ? startBodyRead(socket, onFail) : null;
  if (early) {
    await reader.cancel().catch(() => {});
    throw early;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch {
        if (failed) throw failed;
        // The request stream only fails when the connection does (closed mid-body, broken framing).
        throw new SenderGoneError();
      }
      if (failed) throw failed;
      const { done, value } = next;
      if (done) break;
      total += value.byteLength;
      if (total > max) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } finally {
    if (socket) endBodyRead(socket, onFail);
  }
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

export function intakeRoutes(getIntake: () => Intake): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post('/:endpoint_id', async (c) => {
    const endpointId = c.req.param('endpoint_id');
    if (!isId('endpoint', endpointId))
      throw new AppError('not_found', { detail: 'No endpoint with this id. Check the ingest URL.' });
    let ack: IntakeAck;
    try {
      ack = await getIntake().handle({
        endpointId,
        requestId: c.get('requestId'),
        headers: c.req.raw.headers,
        readBody: (max) => readBodyCapped(c.req.raw, max, c.env?.incoming?.socket),
      });
    } catch (err) {
      // Nobody is left to read an answer; this only keeps the error out of the unexpected-error log.
      if (err instanceof SenderGoneError) return c.body(null, 400);
      // As on the fast path: the rest of an oversized or late body is not read, so the connection closes.
      if (err instanceof AppError && CLOSES_CONNECTION.has(err.code)) c.header('Connection', 'close');
      throw err;
    }
    return c.json(ack, ACK_HTTP_STATUS[ack.status]);
  });
  app.all('/:endpoint_id', () => {
    throw new AppError('method_not_allowed', { detail: 'Sender intake accepts POST only.', allow: ['POST'] });
  });
  // Anything else under /in is a sender miss: problem+json, never the docs site's HTML 404.
  app.all('*', () => {
    throw new AppError('not_found', { detail: 'Ingest URLs look like /in/<ENDPOINT_ID>.' });
  });
  return app;
}
