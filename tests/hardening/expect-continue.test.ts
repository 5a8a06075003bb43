// Issue 24 point 9: `Expect: 100-continue` with a Content-Length over the limit is answered 413 at
// once (RFC 9110 §10.1.1): no `100 Continue` invites the upload. Under the limit the 100 comes and
// the request is served. Runs on the suite's store (intake writes a receipt for its 413).
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_API_MAX_BODY_BYTES } from '../../api/src/http/agent-router.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

/** Sends only the head of a request and returns everything the server writes until it closes or `until` matches. */
function headOnly(head: string, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: server.port, host: '127.0.0.1' });
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(got);
    };
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (until.test(got)) done();
    });
    socket.on('end', done);
    socket.on('error', reject);
    socket.write(head);
  });
}

const head = (path: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n${extra}\r\n`;

describe('Expect: 100-continue', () => {
  const intakeLimit = () => server.runtime.config.intake.maxBodyBytes;
  const cases = [
    { name: 'intake (fast path)', path: () => `/in/${server.sandbox?.endpoint_id}`, limit: intakeLimit },
    { name: 'intake (Hono route)', path: () => `/in/${server.sandbox?.endpoint_id}?via=hono`, limit: intakeLimit },
    {
      name: 'Agent Operations API',
      path: () => '/agent/v1/intents/endpoint-create',
      limit: () => AGENT_API_MAX_BODY_BYTES,
    },
    { name: 'compliance webhook', path: () => '/shopify/webhooks/compliance', limit: intakeLimit },
  ];
  for (const c of cases) {
    for (const over of [1, 1_000_000, 2 ** 40]) {
      it(`${c.name}: Content-Length limit+${over} → 413 payload_too_large, never 100 Continue`, async () => {
        const answer = await headOnly(head(c.path(), c.limit() + over), /\r\n\r\n[\s\S]*\}/);
        expect(answer).not.toMatch(/^HTTP\/1\.1 100/);
        expect(answer).toMatch(/^HTTP\/1\.1 413 /);
        expect(answer).toContain('payload_too_large');
      });
    }
  }

  it('intake writes the sender a receipt for the 413 it answered without a 100', async () => {
    const answer = await headOnly(head(`/in/${server.sandbox?.endpoint_id}`, intakeLimit() + 1), /\r\n\r\n[\s\S]*\}/);
    const requestId = /X-Request-Id: (\S+)/i.exec(answer)?.[1];
    expect(requestId).toBeTruthy();
    const row = await server.runtime.services.db.get<{ error_code: string }>(
      'SELECT error_code FROM receipts WHERE request_id = ?',
      [requestId as string],
    );
    expect(row?.error_code).toBe('payload_too_large');
  });

  it('at or under the limit the server answers 100 Continue and then serves the request', async () => {
    const answer = await headOnly(head(`/in/${server.sandbox?.endpoint_id}`, 2), /^HTTP\/1\.1 100 Continue\r\n\r\n/);
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
  });
});
