// Shared helpers for intake tests: endpoints created through the real service,
// requests sent over real HTTP.
import { createHmac } from 'node:crypto';
import type { Services } from '../../api/src/operations/types.ts';
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
