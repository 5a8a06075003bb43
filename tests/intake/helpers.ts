// Shared helpers for intake tests: endpoints created through the real service,
// requests sent over real HTTP.
import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import type { Services } from '../../api/src/core/types.ts';
import { type CreateEndpointInput, createEndpoint } from '../../api/src/services/endpoints.ts';
import { createShop } from '../../api/src/services/shops.ts';

export async function newShop(services: Services, plan: 'free' | 'starter' | 'growth' | 'scale' = 'growth') {
  const suffix = Math.random().toString(36).slice(2, 10);
  return createShop(services, { domain: `intake-${suffix}.myshopify.com`, plan, sandbox: true });
}

export async function newEndpoint(
  services: Services,
  shopId: string,
  input: Partial<CreateEndpointInput> & Pick<CreateEndpointInput, 'authMode'>,
) {
  return createEndpoint(services, {
    shopId,
    name: `test ${input.authMode}`,
    triggerVariant: 'external_event',
    ...input,
  });
}

export function hmacHex(secret: string | Buffer, data: string): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

export function hmacB64(secret: string | Buffer, data: string): string {
  return createHmac('sha256', secret).update(data).digest('base64');
}

export async function post(url: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { raw: text };
  }
  return { status: res.status, json, headers: res.headers };
}

/** Flips one character of a string (keeps it printable and same length). */
export function flipOne(s: string, at = Math.floor(s.length / 2)): string {
  const c = s[at] ?? 'a';
  const r = c === 'a' ? 'b' : c === '0' ? '1' : /[0-9]/.test(c) ? '0' : 'a';
  return s.slice(0, at) + r + s.slice(at + 1);
}

export interface RawResponse {
  status: number;
  /** Lower-case names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `parts` to one raw TCP connection in order (the next once the previous is flushed, and
 * `gapMs` later when given) and collects the final (non-1xx) HTTP/1.1 responses until `responses`
 * have arrived or the server closes the connection. For what fetch cannot send: pipelined
 * requests, chunked framing, slow senders, lies.
 */
export function rawHttp(
  port: number,
  parts: (string | Uint8Array)[],
  options: { responses?: number; gapMs?: number } = {},
): Promise<{ responses: RawResponse[]; closed: boolean }> {
  const want = options.responses ?? 1;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const responses: RawResponse[] = [];
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ responses, closed });
    };
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) break;
        const [statusLine = '', ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        const status = Number(statusLine.split(' ')[1]);
        const length = Number(headers['content-length'] ?? 0);
        if (buf.byteLength < end + 4 + length) break;
        const body = buf.subarray(end + 4, end + 4 + length).toString('utf8');
        buf = buf.subarray(end + 4 + length);
        if (status >= 200) responses.push({ status, headers, body });
      }
      if (responses.length >= want) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // The server may close while the rest is still being written (an oversized body).
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') finish(true);
      else if (!done) reject(err);
    });
    socket.on('connect', async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0 && options.gapMs !== undefined) await new Promise((r) => setTimeout(r, options.gapMs));
        if (socket.destroyed) return;
        if (!socket.write(p)) await new Promise((r) => socket.once('drain', r));
      }
    });
  });
}
