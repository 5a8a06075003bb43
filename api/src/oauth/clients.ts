// OAuth clients (ADR 1400), the two ways the MCP specification describes: RFC 7591 dynamic
// registration (public clients only, no secrets, rate-limited per address) and Client ID Metadata
// Documents (the client_id is an https URL Flowport fetches with a size limit, a timeout and a
// cache). Either way the client's redirect URIs are https or loopback http, matched exactly (any
// port on a loopback IP literal: isRegisteredRedirectUri).
import { isSandbox } from '../config.ts';
import type { Services } from '../core/types.ts';
import { randomToken } from '../lib/crypto.ts';
import { privateTargetReason } from '../lib/outbound-target.ts';
import {
  countRegistration,
  deleteRegistrationCountsBefore,
  deleteUnusedDynamicClients,
  findClient,
  insertDynamicClient,
  type OAuthClientRow,
  updateClientDocument,
  upsertDocumentClient,
} from '../store/tables/oauth.ts';
import { REGISTRATIONS_PER_HOUR, UNUSED_CLIENT_TTL_MS } from './metadata.ts';
import { addressLimitKey } from '../lib/address-key.ts';

/** A registered client as RFC 7591 §3.2.1 answers it (public clients only). */
export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  client_uri?: string;
}

export const CLIENT_ID_PREFIX = 'fpc_';
export const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
export const METADATA_DOCUMENT_TIMEOUT_MS = 5_000;
export const METADATA_DOCUMENT_CACHE_MS = 3_600_000;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2_000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface OAuthClient {
  client_id: string;
  kind: 'dynamic' | 'metadata_document';
  client_name: string;
  redirect_uris: string[];
}

/** An OAuth error for the client (RFC 6749 §5.2 / RFC 7591 §3.2.2 / RFC 7009). */
export class OAuthProtocolError extends Error {
  readonly error: string;
  readonly status: number;
  /** With a 429: seconds until the client may try again (the Retry-After header). */
  readonly retryAfterS: number | undefined;
  constructor(error: string, description: string, status = 400, retryAfterS?: number) {
    super(description);
    this.error = error;
    this.status = status;
    this.retryAfterS = retryAfterS;
  }
}

/** https anywhere, or http on a loopback host (native clients, RFC 8252 §7.3); never a fragment. */
export function isAcceptableRedirectUri(uri: string): boolean {
  if (uri.length > MAX_URI_LENGTH) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash || url.username || url.password) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/** A loopback IP literal's http redirect URI, split around its port (RFC 8252 §7.3). */
const LOOPBACK_IP_URI = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::\d{1,5})?([/?].*)?$/;

const withoutPort = (uri: string): string | null => {
  const m = LOOPBACK_IP_URI.exec(uri);
  return m ? `http://${m[1]}${m[2] ?? ''}` : null;
};

/**
 * Whether `uri` is one of the client's registered redirect URIs: character for character, except
 * that on a loopback IP literal (`127.0.0.1`, `[::1]`) any port matches, as RFC 8252 §7.3 and
 * OAuth 2.1 ask (a native client listens on a port the system gives it). `localhost` is a name,
 * not a loopback IP (RFC 8252 §8.3): it stays matched exactly, port included (ADR 1430).
 */
export function isRegisteredRedirectUri(registered: readonly string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  const bare = withoutPort(uri);
  if (bare === null || !isAcceptableRedirectUri(uri)) return false;
  return registered.some((r) => withoutPort(r) === bare);
}

function clientName(value: unknown): string {
  const name =
    typeof value === 'string'
      ? value
          .replace(/[\p{C}]/gu, '')
          .trim()
          .slice(0, 100)
      : '';
  return name || 'Unnamed MCP client';
}

function redirectUrisOf(value: unknown, error: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_REDIRECT_URIS)
    throw new OAuthProtocolError(error, `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs.`);
  for (const u of value) {
    if (typeof u !== 'string' || !isAcceptableRedirectUri(u))
      throw new OAuthProtocolError(
        error,
        'Every redirect URI must be https, or http on a loopback host (127.0.0.1, localhost, [::1]), without a fragment.',
      );
  }
  return [...new Set(value as string[])];
}

const HOUR_MS = 3_600_000;

/**
 * Counts one registration in `bucket`'s clock hour unless it already holds `limit`: one conditional
 * upsert, so concurrent registrations cannot pass the limit together. False when full.
 */
async function admitRegistration(db: Services['db'], bucket: string, window: number, limit: number): Promise<boolean> {
  return (await countRegistration(db, bucket, window, limit)).changes === 1;
}

/**
 * RFC 7591 registration of a public client. `from` is the client's network address (as
 * http/client-address.ts derives it), for the per-address limit; every address together has
 * `config.oauth.registrationsPerHour`. Expired clients and old counts are purged here.
 */
export async function registerClient(
  services: Pick<Services, 'db' | 'now' | 'config'>,
  body: unknown,
  from: string,
): Promise<RegisteredClient> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new OAuthProtocolError('invalid_client_metadata', 'The registration body must be a JSON object.');
  const meta = body as Record<string, unknown>;
  const redirectUris = redirectUrisOf(meta.redirect_uris, 'invalid_redirect_uri');
  const authMethod = meta.token_endpoint_auth_method ?? 'none';
  if (authMethod !== 'none')
    throw new OAuthProtocolError(
      'invalid_client_metadata',
      'Only public clients are registered: token_endpoint_auth_method must be "none" (PKCE protects the code).',
    );
  const grantTypes = (meta.grant_types as unknown[] | undefined) ?? ['authorization_code', 'refresh_token'];
  if (
    !Array.isArray(grantTypes) ||
    !grantTypes.every((g) => g === 'authorization_code' || g === 'refresh_token') ||
    !grantTypes.includes('authorization_code')
  )
    throw new OAuthProtocolError(
      'invalid_client_metadata',
      'grant_types may contain only authorization_code and refresh_token.',
    );
  const responseTypes = (meta.response_types as unknown[] | undefined) ?? ['code'];
  if (!Array.isArray(responseTypes) || !responseTypes.every((r) => r === 'code'))
    throw new OAuthProtocolError('invalid_client_metadata', 'response_types may contain only code.');
  const now = services.now();
  const window = Math.floor(now / HOUR_MS) * HOUR_MS;
  const cap = services.config.oauth.registrationsPerHour;
  const nextHourS = Math.max(1, Math.ceil((window + HOUR_MS - now) / 1000));
  const clientId = `${CLIENT_ID_PREFIX}${randomToken(16)}`;
  const info: RegisteredClient = {
    client_id: clientId,
    client_id_issued_at: Math.floor(now / 1000),
    client_name: clientName(meta.client_name),
    redirect_uris: redirectUris,
    grant_types: grantTypes as string[],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(typeof meta.client_uri === 'string' && /^https:\/\//.test(meta.client_uri)
      ? { client_uri: meta.client_uri.slice(0, MAX_URI_LENGTH) }
      : {}),
  };
  await services.db.tx(async (tx) => {
    // Clients never used past their day, and counts of past hours, are of no use any more.
    await deleteUnusedDynamicClients(tx, now - UNUSED_CLIENT_TTL_MS);
    await deleteRegistrationCountsBefore(tx, window);
    // An IPv6 client counts on its /64 (lib/address-key.ts), an IPv4 one on its address.
    if (!(await admitRegistration(tx, `addr:${addressLimitKey(from)}`, window, REGISTRATIONS_PER_HOUR)))
      throw new OAuthProtocolError(
        'oauth_registration_rate_limited',
        `At most ${REGISTRATIONS_PER_HOUR} registrations per address (an IPv6 /64) per hour; reuse an earlier client_id.`,
        429,
        nextHourS,
      );
    if (!(await admitRegistration(tx, 'all', window, cap)))
      throw new OAuthProtocolError(
        'oauth_registration_cap_reached',
        `This Flowport accepts at most ${cap} client registrations per hour from all addresses together, and that many were made this hour; reuse an earlier client_id or try again next hour.`,
        429,
        nextHourS,
      );
    await insertDynamicClient(tx, {
      clientId,
      name: info.client_name,
      redirectUrisJson: JSON.stringify(redirectUris),
      metadataJson: JSON.stringify(info),
      from,
      at: now,
    });
  });
  return info;
}

/** Whether a client_id names a metadata document: https, or (sandbox only) loopback http for local tests. */
export function isMetadataDocumentClientId(clientId: string, services: Pick<Services, 'config'>): boolean {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.hash || url.username || url.password || url.pathname === '/') return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname) && isSandbox(services.config);
}

async function readLimited(res: Response, limit: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`the document is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * SSRF guard: an https document must resolve only to public addresses (the shared check in
 * lib/outbound-target.ts). The fetch resolves again, so a rebinding name can still race this; the
 * size, time and no-redirect limits bound what it could read, and only the client's name and
 * redirect URIs are ever shown.
 */
async function refuseNonPublicHost(url: URL, allowPrivate: boolean): Promise<void> {
  const reason = await privateTargetReason(url, allowPrivate);
  if (reason !== null) throw new Error(`${url.host} resolves to a non-public address or does not resolve`);
}

async function fetchMetadataDocument(
  clientId: string,
  allowLoopback: boolean,
): Promise<{ name: string; redirectUris: string[]; raw: unknown }> {
  let text: string;
  try {
    await refuseNonPublicHost(new URL(clientId), allowLoopback);
    const res = await fetch(clientId, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(METADATA_DOCUMENT_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`it answered HTTP ${res.status}`);
    text = await readLimited(res, METADATA_DOCUMENT_MAX_BYTES);
  } catch (err) {
    throw new OAuthProtocolError(
      'invalid_client',
      `The client metadata document could not be fetched: ${(err as Error).message}.`,
    );
  }
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new OAuthProtocolError('invalid_client', 'The client metadata document is not JSON.');
  }
  if (typeof doc !== 'object' || doc === null || doc.client_id !== clientId)
    throw new OAuthProtocolError(
      'invalid_client',
      'The client metadata document does not name its own URL as client_id.',
    );
  const authMethod = doc.token_endpoint_auth_method ?? 'none';
  if (authMethod !== 'none')
    throw new OAuthProtocolError(
      'invalid_client',
      'Only public clients (token_endpoint_auth_method "none") are accepted.',
    );
  return {
    name: clientName(doc.client_name),
    redirectUris: redirectUrisOf(doc.redirect_uris, 'invalid_client'),
    raw: doc,
  };
}

/** The client a client_id names, or an `invalid_client` OAuthProtocolError. */
export async function resolveClient(
  services: Pick<Services, 'db' | 'now' | 'config'>,
  clientId: string,
): Promise<OAuthClient> {
  if (!clientId || clientId.length > MAX_URI_LENGTH)
    throw new OAuthProtocolError('invalid_client', 'client_id is missing.');
  const row = await findClient(services.db, clientId);
  const now = services.now();
  if (isMetadataDocumentClientId(clientId, services)) {
    if (row && row.kind === 'metadata_document' && now - Number(row.fetched_at) < METADATA_DOCUMENT_CACHE_MS)
      return toClient(row);
    const doc = await fetchMetadataDocument(clientId, isSandbox(services.config));
    const fetched = {
      name: doc.name,
      redirectUrisJson: JSON.stringify(doc.redirectUris),
      metadataJson: JSON.stringify(doc.raw),
      fetchedAt: now,
    };
    // created_at is `now` too on insert.
    if (row) await updateClientDocument(services.db, clientId, fetched);
    else await upsertDocumentClient(services.db, clientId, fetched);
    return { client_id: clientId, kind: 'metadata_document', client_name: doc.name, redirect_uris: doc.redirectUris };
  }
  if (row?.kind !== 'dynamic')
    throw new OAuthProtocolError('invalid_client', 'No client is registered with this client_id.');
  if (row.last_used_at === null && now - Number(row.created_at) >= UNUSED_CLIENT_TTL_MS)
    throw new OAuthProtocolError(
      'invalid_client',
      `This client registration expired: it was never used within ${UNUSED_CLIENT_TTL_MS / HOUR_MS} hours of registering. Register again.`,
    );
  return toClient(row);
}

function toClient(row: OAuthClientRow): OAuthClient {
  return {
    client_id: row.client_id,
    kind: row.kind,
    client_name: row.client_name,
    redirect_uris: JSON.parse(row.redirect_uris_json) as string[],
  };
}
