// Issue 24 point 2: the sandbox's Shopify stand-in (in-process and standalone) serves only this
// machine's own tools and pages: a loopback Host with the server's port, no foreign Origin, no
// proxy or tunnel header, JSON on its POSTs. Real HTTP on loopback with hand-set headers.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MOUNT_PATH } from '../../api/src/sandbox/app.ts';
import { type SandboxServer, startSandboxServer } from '../../api/src/sandbox/server.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

let s: TestServer;
let standalone: SandboxServer;
beforeAll(async () => {
  s = await startTestServer({ worker: false });
  standalone = await startSandboxServer();
});
afterAll(async () => {
  await s?.close();
  await standalone?.close();
});

function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const targets = [
  { name: 'in-process stand-in', port: () => s.port, faults: () => s.runtime.sandbox?.faults },
  { name: 'standalone `flowport sandbox`', port: () => standalone.port, faults: () => standalone.state.faults },
];

describe.each(targets)('$name', ({ port, faults }) => {
  const good = () => ({ host: `127.0.0.1:${port()}` });
  const P = () => port();

  const hostCases = () => [
    'evil.example',
    `evil.example:${P()}`,
    `localhost.evil.example:${P()}`,
    `127.0.0.1.nip.io:${P()}`,
    `localhost:${P() === 1 ? 2 : 1}`,
    '127.0.0.1',
    'localhost',
    `[::1]:${P() + 1}`,
    `0.0.0.0:${P()}`,
    `127.0.0.2:${P()}`,
    `[::ffff:7f00:1]:${P()}`,
    `localhost:${P()}@evil.example`,
    '',
  ];
  const relayHeaders = [
    ['forwarded', 'for=203.0.113.9'],
    ['via', '1.1 nginx'],
    ['x-forwarded-for', '203.0.113.9'],
    ['x-forwarded-host', 'flowport.example'],
    ['x-forwarded-proto', 'https'],
    ['x-forwarded-port', '443'],
    ['x-forwarded-server', 'edge'],
    ['x-real-ip', '203.0.113.9'],
    ['x-client-ip', '203.0.113.9'],
    ['cf-connecting-ip', '203.0.113.9'],
    ['true-client-ip', '203.0.113.9'],
    ['fastly-client-ip', '203.0.113.9'],
  ] as const;
  const originCases = () => [
    'http://evil.example',
    'null',
    `http://localhost:${P() + 1}`,
    `https://localhost:${P()}`,
    `http://localhost:${P()}/path`,
    `http://evil.example:${P()}`,
    'file://',
    'not a url',
  ];
  const siteCases = ['cross-site', 'same-site'];
  const mediaCases = [
    null,
    'text/plain',
    'text/plain;charset=UTF-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    'application/json-seq',
  ];

  it('refuses hostile Host values (DNS rebinding, wrong port, non-loopback names): 404, nothing served', async () => {
    for (const host of hostCases()) {
      const r = await send(port(), 'GET', `${SANDBOX_MOUNT_PATH}/triggers`, { host });
      // 404 from the guard; Node's parser already refuses a few shapes (400).
      expect([400, 404], host).toContain(r.status);
      expect(r.text).not.toContain('"triggers"');
    }
  });

  it('refuses any proxy or tunnel header, whoever the peer is', async () => {
    for (const [name, value] of relayHeaders) {
      const r = await send(port(), 'GET', `${SANDBOX_MOUNT_PATH}/triggers`, { ...good(), [name]: value });
      expect(r.status, name).toBe(404);
    }
  });

  it('refuses a foreign Origin or a cross-site fetch, and the fault switch stays off', async () => {
    const shop = `guard-${Math.random().toString(36).slice(2)}.myshopify.com`;
    for (const origin of originCases()) {
      const r = await send(
        port(),
        'POST',
        `${SANDBOX_MOUNT_PATH}/_faults/${shop}`,
        { ...good(), origin, 'content-type': 'application/json' },
        '{"mode":"http_500"}',
      );
      expect(r.status, origin).toBe(404);
    }
    for (const site of siteCases) {
      const r = await send(
        port(),
        'POST',
        `${SANDBOX_MOUNT_PATH}/_faults/${shop}`,
        { ...good(), 'sec-fetch-site': site, 'content-type': 'application/json' },
        '{"mode":"http_500"}',
      );
      expect(r.status, site).toBe(404);
    }
    expect(faults()?.has(shop)).toBe(false);
  });

  it('a POST must be application/json: a cross-site text/plain or form POST cannot switch faults (415)', async () => {
    const shop = `media-${Math.random().toString(36).slice(2)}.myshopify.com`;
    for (const ct of mediaCases) {
      const r = await send(
        port(),
        'POST',
        `${SANDBOX_MOUNT_PATH}/_faults/${shop}`,
        { ...good(), ...(ct === null ? {} : { 'content-type': ct }) },
        // A form body that parses (a malformed one is refused 400 by the input guard before any route, ADR 1102).
        ct?.startsWith('multipart/form-data')
          ? '--x\r\nContent-Disposition: form-data; name="mode"\r\n\r\nhttp_500\r\n--x--\r\n'
          : '{"mode":"http_500"}',
      );
      expect(r.status, String(ct)).toBe(415);
    }
    expect(faults()?.has(shop)).toBe(false);
  });

  it("serves this machine's tools: loopback Host names with the port, a same-origin page, JSON POSTs", async () => {
    for (const host of [`127.0.0.1:${port()}`, `localhost:${port()}`, `LOCALHOST:${port()}`, `[::1]:${port()}`]) {
      const r = await send(port(), 'GET', `${SANDBOX_MOUNT_PATH}/triggers`, { host });
      expect(r.status, host).toBe(200);
      expect(r.text).toContain('"triggers"');
    }
    const shop = `ok-${Math.random().toString(36).slice(2)}.myshopify.com`;
    const r = await send(
      port(),
      'POST',
      `${SANDBOX_MOUNT_PATH}/_faults/${shop}`,
      {
        host: `localhost:${port()}`,
        origin: `http://localhost:${port()}`,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/json; charset=utf-8',
      },
      '{"mode":"http_500"}',
    );
    expect(r.status).toBe(200);
    expect(faults()?.get(shop)?.mode).toBe('http_500');
  });
});

describe('/metrics (counts over every shop) is loopback-only by default', () => {
  it('refuses a rebound Host, a proxy header or a foreign Origin; serves this machine', async () => {
    const refused: Record<string, string>[] = [
      { host: 'evil.example' },
      { host: `evil.example:${s.port}` },
      { host: `127.0.0.1:${s.port}`, 'x-forwarded-for': '203.0.113.9' },
      { host: `127.0.0.1:${s.port}`, via: '1.1 proxy' },
      { host: `127.0.0.1:${s.port}`, forwarded: 'for=203.0.113.9' },
      { host: `127.0.0.1:${s.port}`, origin: 'http://evil.example' },
    ];
    for (const headers of refused) {
      const r = await send(s.port, 'GET', '/metrics', headers);
      expect(r.status, JSON.stringify(headers)).toBe(404);
      expect(r.text).not.toContain('flowport_events');
    }
    const ok = await send(s.port, 'GET', '/metrics', { host: `localhost:${s.port}` });
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('flowport_events');
  });

  it('FLOWPORT_METRICS_REMOTE=on serves a scraper on another host', async () => {
    const open = await startTestServer({ worker: false, env: { FLOWPORT_METRICS_REMOTE: 'on' } });
    try {
      const r = await send(open.port, 'GET', '/metrics', { host: `metrics.internal:${open.port}` });
      expect(r.status).toBe(200);
      expect(r.text).toContain('flowport_events');
    } finally {
      await open.close();
    }
  });
});
