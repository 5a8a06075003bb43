// Sender authentication on the raw body, one function per auth mode. Constant-
// time comparisons only; the current secret is tried first, then the previous
// one while its rotation overlap lasts. Throws AppError with an intake code.
import { hash } from 'node:crypto';
import { AppError } from '../errors/problem.ts';
import { safeEqual } from '../lib/crypto.ts';
import { DEFAULT_HMAC, DEFAULT_TOLERANCE_SEC, type EndpointConfig, type HmacParams } from '../services/endpoints.ts';
import type { HeaderReader } from './intake.ts';

export interface VerifyRequest {
  headers: HeaderReader;
  raw: Uint8Array;
  /** ms since epoch */
  now: number;
}

const B64_RE = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * One secret as verification uses it: the string (static header, Basic) and the HMAC-SHA256 key
 * prepared from it once, for the endpoint's mode (see HmacKey).
 */
export interface VerifySecret {
  value: string;
  hmacKey: HmacKey;
}

const SHA256_BLOCK = 64;
const SHA256_BYTES = 32;

/**
 * An HMAC-SHA256 key with its pads computed once (RFC 2104): HMAC(K, m) = H((K ^ opad) || H((K ^
 * ipad) || m)), with K hashed first when longer than the 64-byte block. Two one-shot `hash()`
 * calls over the pads cost about half of `createHmac(…).digest()` for a 1 KiB body: most of
 * createHmac's cost is per call (an OpenSSL MAC context and a Buffer for the digest), not the
 * hashing, and intake verifies every request (npm run bench:verify prints both). Checked against
 * createHmac for keys around the block size in tests/intake/verify-hmac.test.ts.
 */
export class HmacKey {
  private readonly ipad: Buffer;
  /** The outer pad followed by room for the inner digest: one buffer, reused (JS runs one call at a time). */
  private readonly outer: Buffer;

  constructor(key: Uint8Array) {
    const k = Buffer.alloc(SHA256_BLOCK);
    if (key.byteLength > SHA256_BLOCK) k.write(hash('sha256', key, 'binary'), 'binary');
    else k.set(key);
    this.ipad = Buffer.alloc(SHA256_BLOCK);
    this.outer = Buffer.alloc(SHA256_BLOCK + SHA256_BYTES);
    for (let i = 0; i < SHA256_BLOCK; i++) {
      this.ipad[i] = (k[i] as number) ^ 0x36;
      this.outer[i] = (k[i] as number) ^ 0x5c;
    }
  }

  /** HMAC-SHA256 of the parts joined, as 32 bytes. */
  digest(parts: readonly (string | Uint8Array)[]): Buffer {
    let length = SHA256_BLOCK;
    for (const p of parts) length += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.byteLength;
    const inner = Buffer.allocUnsafe(length);
    inner.set(this.ipad, 0);
    let at = SHA256_BLOCK;
    for (const p of parts) {
      if (typeof p === 'string') at += inner.write(p, at, 'utf8');
      else {
        inner.set(p, at);
        at += p.byteLength;
      }
    }
    // Binary (latin1) strings, not Buffers, out of hash(): a Buffer made by the binding costs more than the hash.
    this.outer.write(hash('sha256', inner, 'binary'), SHA256_BLOCK, 'latin1');
    return Buffer.from(hash('sha256', this.outer, 'binary'), 'latin1');
  }
}

/** The HMAC key bytes of a secret for a mode: Standard Webhooks decodes base64, every other mode signs with the UTF-8 secret. */
function hmacKeyBytes(mode: EndpointConfig['authMode'], secret: string): Buffer {
  return mode === 'standard_webhooks' ? standardWebhooksKey(secret) : Buffer.from(secret, 'utf8');
}

/** Prepares secrets for verifyRequest (once per cached endpoint, not per request). */
export function verifySecret(mode: EndpointConfig['authMode'], value: string): VerifySecret {
  return { value, hmacKey: new HmacKey(hmacKeyBytes(mode, value)) };
}

/** Decodes a signature string into bytes, or null when it is not valid in that encoding. */
function decodeSig(value: string, encoding: 'hex' | 'base64'): Buffer | null {
  if (encoding === 'hex') {
    if (value.length !== 2 * SHA256_BYTES) return null;
    // Node's hex decoder stops at the first character that is not hex, so 64 characters give
    // 32 bytes exactly when every one of them is a hex digit.
    const buf = Buffer.from(value, 'hex');
    return buf.length === SHA256_BYTES ? buf : null;
  }
  if (!B64_RE.test(value)) return null;
  const buf = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return buf.length === SHA256_BYTES ? buf : null;
}

function header(req: VerifyRequest, name: string): string | null {
  const v = req.headers.get(name);
  return v === null ? null : v.trim();
}

/**
 * A signed timestamp: its value, and its text exactly as sent, which is what the sender signed
 * (`0170…` signs as `0170…`). The tolerance is checked after the signature, by assertFresh.
 */
interface SignedTimestamp {
  seconds: number;
  text: string;
}

/** Parses integer Unix seconds. */
function checkTimestamp(raw: string | null, headerName: string): SignedTimestamp {
  if (raw === null || raw === '')
    throw new AppError('timestamp_missing', { detail: `Missing the signature timestamp (${headerName}).` });
  if (!/^\d{1,12}$/.test(raw)) {
    throw new AppError('timestamp_invalid', { detail: `The ${headerName} value must be integer Unix seconds.` });
  }
  return { seconds: Number(raw), text: raw };
}

function assertFresh(ts: SignedTimestamp, req: VerifyRequest, toleranceSec: number): void {
  const skew = Math.abs(Math.floor(req.now / 1000) - ts.seconds);
  if (skew > toleranceSec) {
    throw new AppError('timestamp_outside_tolerance', {
      detail: `The signed timestamp is ${skew} s away from Flowport's clock; the tolerance is ${toleranceSec} s.`,
      extra: { tolerance_sec: toleranceSec },
    });
  }
}

function anyMatch(candidates: readonly Buffer[], expected: readonly Buffer[]): boolean {
  let ok = false;
  // Compare every pair (no early exit) so timing does not reveal which secret matched.
  for (const e of expected) for (const c of candidates) if (safeEqual(c, e)) ok = true;
  return ok;
}

function mismatch(): never {
  throw new AppError('signature_mismatch', {
    detail: 'The signature does not match the raw body with the current (or overlapping previous) secret.',
  });
}

export function verifyHmacSha256(params: HmacParams, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const given = header(req, params.header);
  if (!given) throw new AppError('signature_missing', { detail: `Missing the ${params.header} header.` });
  let ts: SignedTimestamp | null = null;
  if (params.timestampHeader) ts = checkTimestamp(header(req, params.timestampHeader), params.timestampHeader);
  let value = given;
  if (params.prefix) {
    if (!value.startsWith(params.prefix)) {
      throw new AppError('signature_malformed', {
        detail: `The ${params.header} value must start with "${params.prefix}".`,
      });
    }
    value = value.slice(params.prefix.length);
  }
  const sig = decodeSig(value, params.encoding);
  if (!sig)
    throw new AppError('signature_malformed', {
      detail: `The ${params.header} value is not a ${params.encoding} HMAC-SHA256.`,
    });
  const parts = ts === null ? [req.raw] : [`${ts.text}.`, req.raw];
  if (
    !anyMatch(
      [sig],
      secrets.map((s) => s.hmacKey.digest(parts)),
    )
  )
    mismatch();
  if (ts !== null) assertFresh(ts, req, params.toleranceSec);
}

function verifyStripe(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const h = header(req, 'stripe-signature');
  if (!h) throw new AppError('signature_missing', { detail: 'Missing the Stripe-Signature header.' });
  let t: string | null = null;
  const v1: Buffer[] = [];
  for (const item of h.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 1) continue;
    const k = item.slice(0, eq).trim();
    const v = item.slice(eq + 1).trim();
    if (k === 't') t = v;
    else if (k === 'v1') {
      const b = decodeSig(v, 'hex');
      if (b) v1.push(b);
    }
  }
  const ts = checkTimestamp(t, 'Stripe-Signature t=');
  if (v1.length === 0)
    throw new AppError('signature_malformed', { detail: 'Stripe-Signature has no v1=<hex> signature.' });
  if (
    !anyMatch(
      v1,
      secrets.map((s) => s.hmacKey.digest([`${ts.text}.`, req.raw])),
    )
  )
    mismatch();
  assertFresh(ts, req, config.toleranceSec ?? DEFAULT_TOLERANCE_SEC);
}

/** Standard Webhooks key: the base64 part after `whsec_`, decoded. */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

function verifyStandardWebhooks(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const svix = req.headers.has('svix-signature') && !req.headers.has('webhook-signature');
  const p = svix ? 'svix' : 'webhook';
  const sigHeader = header(req, `${p}-signature`);
  if (!sigHeader)
    throw new AppError('signature_missing', { detail: 'Missing the webhook-signature (or svix-signature) header.' });
  const id = header(req, `${p}-id`);
  if (!id)
    throw new AppError('signature_malformed', {
      detail: `Missing the ${p}-id header (it is part of the signed content).`,
    });
  const tol = config.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const ts = checkTimestamp(header(req, `${p}-timestamp`), `${p}-timestamp`);
  const sigs: Buffer[] = [];
  for (const part of sigHeader.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue;
    const b = decodeSig(part.slice(comma + 1), 'base64');
    if (b) sigs.push(b);
  }
  if (sigs.length === 0)
    throw new AppError('signature_malformed', { detail: `${p}-signature has no "v1,<base64>" signature.` });
  if (
    !anyMatch(
      sigs,
      secrets.map((s) => s.hmacKey.digest([`${id}.${ts.text}.`, req.raw])),
    )
  )
    mismatch();
  assertFresh(ts, req, tol);
}

function verifySlack(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const sig = header(req, 'x-slack-signature');
  if (!sig) throw new AppError('signature_missing', { detail: 'Missing the X-Slack-Signature header.' });
  const tol = config.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const ts = checkTimestamp(header(req, 'x-slack-request-timestamp'), 'X-Slack-Request-Timestamp');
  const b = sig.startsWith('v0=') ? decodeSig(sig.slice(3), 'hex') : null;
  if (!b) throw new AppError('signature_malformed', { detail: 'X-Slack-Signature must be "v0=<hex>".' });
  if (
    !anyMatch(
      [b],
      secrets.map((s) => s.hmacKey.digest([`v0:${ts.text}:`, req.raw])),
    )
  )
    mismatch();
  assertFresh(ts, req, tol);
}

function verifyStaticHeader(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const name = config.staticHeader?.header ?? 'x-flowport-token';
  const given = header(req, name);
  if (!given) throw new AppError('credentials_missing', { detail: `Missing the ${name} header.` });
  if (
    !anyMatch(
      [Buffer.from(given)],
      secrets.map((s) => Buffer.from(s.value)),
    )
  ) {
    throw new AppError('credentials_invalid', { detail: `The ${name} value does not match.` });
  }
}

function verifyBasic(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const auth = header(req, 'authorization');
  if (!auth || !/^basic\s+/i.test(auth))
    throw new AppError('credentials_missing', { detail: 'Missing an Authorization: Basic header.' });
  const decoded = Buffer.from(auth.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const pass = colon < 0 ? '' : decoded.slice(colon + 1);
  const userOk = safeEqual(user, config.basic?.username ?? '');
  const passOk = anyMatch(
    [Buffer.from(pass)],
    secrets.map((s) => Buffer.from(s.value)),
  );
  if (!(userOk && passOk))
    throw new AppError('credentials_invalid', { detail: 'The Basic user or password does not match.' });
}

/** GitHub and Shopify are hmac_sha256 with fixed parameters. */
export const PRESET_HMAC: { github: HmacParams; shopify: HmacParams } = {
  github: {
    header: 'x-hub-signature-256',
    encoding: 'hex',
    prefix: 'sha256=',
    timestampHeader: null,
    toleranceSec: DEFAULT_TOLERANCE_SEC,
  },
  shopify: {
    header: 'x-shopify-hmac-sha256',
    encoding: 'base64',
    prefix: '',
    timestampHeader: null,
    toleranceSec: DEFAULT_TOLERANCE_SEC,
  },
};

type Verifier = (config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest) => void;

/** How each auth mode checks a request: the GitHub and Shopify presets are HMAC-SHA256 with fixed parameters. */
const VERIFIERS: Record<EndpointConfig['authMode'], Verifier> = {
  hmac_sha256: (config, secrets, req) => verifyHmacSha256(config.hmac ?? DEFAULT_HMAC, secrets, req),
  github: (_config, secrets, req) => verifyHmacSha256(PRESET_HMAC.github, secrets, req),
  shopify: (_config, secrets, req) => verifyHmacSha256(PRESET_HMAC.shopify, secrets, req),
  stripe: verifyStripe,
  standard_webhooks: verifyStandardWebhooks,
  slack: verifySlack,
  static_header: verifyStaticHeader,
  basic: verifyBasic,
};

/** Verifies a request for the endpoint's auth mode; throws AppError on failure. */
export function verifyRequest(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  if (secrets.length === 0)
    throw new AppError('credentials_invalid', { detail: 'The endpoint has no active secret; rotate it to set one.' });
  VERIFIERS[config.authMode](config, secrets, req);
}
