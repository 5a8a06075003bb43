// Sender authentication on the raw body, one function per auth mode. Constant-
// time comparisons only; the current secret is tried first, then the previous
// one while its rotation overlap lasts. Throws AuthRefusal (an AppError with an intake code and
// the failed check its receipt records, errors/auth-failure.ts).
import { hash } from 'node:crypto';
import { type AuthFailureHint, AuthRefusal, signatureShape } from '../errors/auth-failure.ts';
import { safeEqual } from '../lib/crypto.ts';
import { DEFAULT_HMAC, DEFAULT_TOLERANCE_SEC, type EndpointConfig, type HmacParams } from '../services/endpoints.ts';
import type { HeaderReader } from './intake.ts';
import { signedContentOf } from './auth-modes.ts';
import { formatHint, type MismatchFacts, mismatchHint, missingPrefixHint } from './verify-hints.ts';
import type { AuthFailureCheck } from '../errors/auth-failure.ts';
import type { AuthMode } from '../store/tables/endpoints.ts';

export interface VerifyRequest {
  headers: HeaderReader;
  raw: Uint8Array;
  /** ms since epoch */
  now: number;
  /** Secrets no longer active (the previous one after its overlap): tried for failure.hint only. */
  expired?: readonly ExpiredSecret[];
}

export interface ExpiredSecret {
  secret: VerifySecret;
  expiredAt: number;
}

/**
 * The order each auth mode checks a request in, first to last: the first that fails is the
 * receipt's `failure.check`. The verifiers below follow it (tests/intake/refusal-hints.test.ts,
 * tests/intake/refused-receipts.test.ts); the auth-modes docs page renders it. A timestamp's
 * tolerance comes after the value: a stale but genuine signature says so, a forged one does not.
 */
const SIG_FORMAT: readonly AuthFailureCheck[] = ['wrong_prefix', 'wrong_encoding', 'wrong_length'];
const TS_PARSE: readonly AuthFailureCheck[] = ['timestamp_missing', 'timestamp_malformed'];
/** Stripe and Standard Webhooks check in the same order (timestamp parsed before the signature header). */
const SIGNED_HEADER_WITH_TIMESTAMP: readonly AuthFailureCheck[] = [
  'no_active_secret',
  'header_missing',
  ...TS_PARSE,
  'header_malformed',
  'wrong_encoding',
  'wrong_length',
  'value_mismatch',
  'timestamp_outside_tolerance',
];
export const VERIFY_ORDER: Record<AuthMode, readonly AuthFailureCheck[]> = {
  hmac_sha256: [
    'no_active_secret',
    'header_missing',
    ...TS_PARSE,
    ...SIG_FORMAT,
    'value_mismatch',
    'timestamp_outside_tolerance',
  ],
  github: ['no_active_secret', 'header_missing', ...SIG_FORMAT, 'value_mismatch'],
  shopify: ['no_active_secret', 'header_missing', 'wrong_encoding', 'wrong_length', 'value_mismatch'],
  stripe: SIGNED_HEADER_WITH_TIMESTAMP,
  standard_webhooks: SIGNED_HEADER_WITH_TIMESTAMP,
  slack: [
    'no_active_secret',
    'header_missing',
    ...TS_PARSE,
    ...SIG_FORMAT,
    'value_mismatch',
    'timestamp_outside_tolerance',
  ],
  static_header: ['no_active_secret', 'header_missing', 'value_mismatch'],
  basic: ['no_active_secret', 'header_missing', 'wrong_prefix', 'header_malformed', 'value_mismatch'],
};

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

/** Parses integer Unix seconds; `header` is where the timestamp comes from. */
function checkTimestamp(raw: string | null, headerName: string, header: string): SignedTimestamp {
  if (raw === null || raw === '')
    throw new AuthRefusal('timestamp_missing', `Missing the signature timestamp (${headerName}).`, {
      check: 'timestamp_missing',
      detail: `No signed timestamp in ${headerName}: the auth mode signs one, so the request cannot be checked.`,
      header,
    });
  if (!/^\d{1,12}$/.test(raw)) {
    throw new AuthRefusal('timestamp_invalid', `The ${headerName} value must be integer Unix seconds.`, {
      check: 'timestamp_malformed',
      detail: `The ${headerName} value (${raw.length} characters) is not integer Unix seconds${/^\d{13,}$/.test(raw) ? ': it looks like milliseconds' : ''}.`,
      header,
    });
  }
  return { seconds: Number(raw), text: raw };
}

function assertFresh(ts: SignedTimestamp, req: VerifyRequest, toleranceSec: number, header: string): void {
  const offset = ts.seconds - Math.floor(req.now / 1000);
  const skew = Math.abs(offset);
  if (skew > toleranceSec) {
    throw new AuthRefusal(
      'timestamp_outside_tolerance',
      `The signed timestamp is ${skew} s away from Flowport's clock; the tolerance is ${toleranceSec} s.`,
      {
        check: 'timestamp_outside_tolerance',
        detail: `The signature matches, but the signed timestamp is ${skew} s ${offset < 0 ? 'behind' : 'ahead of'} Flowport's clock; the tolerance is ${toleranceSec} s. ${offset < 0 ? 'The sender reused an old signature (a retry must be signed again) or its clock is behind.' : "The sender's clock is ahead."}`,
        header,
        tolerance_sec: toleranceSec,
        timestamp_offset_sec: offset,
      },
      { tolerance_sec: toleranceSec },
    );
  }
}

function anyMatch(candidates: readonly Buffer[], expected: readonly Buffer[]): boolean {
  let ok = false;
  // Compare every pair (no early exit) so timing does not reveal which secret matched.
  for (const e of expected) for (const c of candidates) if (safeEqual(c, e)) ok = true;
  return ok;
}

/**
 * `given` signatures (several for modes that send more than one) matched none of the secrets over
 * `signed` (signedContentOf, for this endpoint's config); the hint is worked out here, on the failure path only.
 */
/** The timestamp a request carried, for a mismatch to say whether it alone would pass. */
interface CarriedTimestamp {
  ts: SignedTimestamp;
  toleranceSec: number;
  header: string;
}

/**
 * Where the request's timestamp stands against the tolerance, once its signature is fixed (not
 * checked as the refusal: the tolerance applies to a timestamp the signature covers).
 */
function carriedTimestamp(t: CarriedTimestamp, now: number) {
  const offset = t.ts.seconds - Math.floor(now / 1000);
  const skew = Math.abs(offset);
  const within = skew <= t.toleranceSec;
  const where = `${skew} s ${offset < 0 ? 'behind' : 'ahead of'} Flowport's clock`;
  return {
    tolerance_sec: t.toleranceSec,
    timestamp_offset_sec: offset,
    sentence: within
      ? ` Its timestamp (${t.header}) is ${where}, within the ${t.toleranceSec} s tolerance.`
      : ` Its timestamp (${t.header}) is also ${where}, outside the ${t.toleranceSec} s tolerance: with the signature fixed it would still be refused (timestamp_outside_tolerance). Sign each request, retries included, with the current time.`,
  };
}

function mismatch(header: string, signed: string, facts: MismatchFacts, timestamp?: CarriedTimestamp): never {
  const secrets = facts.secrets.length;
  const given = facts.sigs.length;
  const sigs = given === 1 ? 'The signature is well formed but' : `None of the ${given} signatures`;
  // A hint that matched says what the sender does differently; the generic causes only without one.
  const hint = mismatchHint(facts);
  const why = hint
    ? `It does match one well-known alternative (failure.hint ${hint.code}): ${hint.detail}`
    : 'The sender signs other bytes (a re-serialised body, another signed-content format) or uses another secret.';
  const carried = timestamp ? carriedTimestamp(timestamp, facts.req.now) : null;
  throw new AuthRefusal(
    'signature_mismatch',
    `The signature does not match the signed content, ${signed}, with the current (or overlapping previous) secret.`,
    {
      check: 'value_mismatch',
      detail: `${sigs} ${given === 1 ? 'matches' : 'match'} none of the ${secrets} active secret${secrets === 1 ? '' : 's'} over the signed content this endpoint expects: ${signed}. ${why}${carried?.sentence ?? ''}`,
      header,
      active_secrets: secrets,
      hint,
      ...(carried ? { tolerance_sec: carried.tolerance_sec, timestamp_offset_sec: carried.timestamp_offset_sec } : {}),
    },
  );
}

/** A header the auth mode needs is absent (code: what the sender is told). */
function missing(
  code: 'signature_missing' | 'signature_malformed' | 'credentials_missing',
  senderDetail: string,
  header: string,
): never {
  throw new AuthRefusal(code, senderDetail, {
    check: 'header_missing',
    detail: `The ${header} header is absent or empty.`,
    header,
  });
}

/** A signature value that is there but is not the expected prefix, encoding or length. */
function malformed(
  senderDetail: string,
  header: string,
  failure: {
    check: 'header_malformed' | 'wrong_prefix' | 'wrong_encoding' | 'wrong_length';
    detail: string;
    hint?: AuthFailureHint | null;
  },
): never {
  throw new AuthRefusal('signature_malformed', senderDetail, { ...failure, header });
}

export function verifyHmacSha256(params: HmacParams, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const name = params.header;
  const given = header(req, params.header);
  if (!given) missing('signature_missing', `Missing the ${params.header} header.`, name);
  let ts: SignedTimestamp | null = null;
  const tsHeader = params.timestampHeader;
  if (tsHeader) ts = checkTimestamp(header(req, tsHeader), tsHeader, tsHeader);
  const before = ts === null ? null : `${ts.text}.`;
  let value = given;
  if (params.prefix) {
    if (!value.startsWith(params.prefix)) {
      malformed(`The ${params.header} value must start with "${params.prefix}".`, name, {
        check: 'wrong_prefix',
        detail: `The ${params.header} value does not start with "${params.prefix}"${decodeSig(value, params.encoding) ? ': it is a signature sent without its prefix' : ''}.`,
        hint: missingPrefixHint(value, params, { secrets, req, before }, decodeSig),
      });
    }
    value = value.slice(params.prefix.length);
  }
  const sig = decodeSig(value, params.encoding);
  if (!sig)
    malformed(`The ${params.header} value is not a ${params.encoding} HMAC-SHA256.`, name, {
      ...signatureShape(value, params.encoding),
      hint: formatHint(value, params, { secrets, req, before }, decodeSig),
    });
  const parts = ts === null ? [req.raw] : [before as string, req.raw];
  if (
    !anyMatch(
      [sig],
      secrets.map((s) => s.hmacKey.digest(parts)),
    )
  )
    mismatch(
      name,
      signedContentOf('hmac_sha256', tsHeader) as string,
      {
        sigs: [sig],
        secrets,
        req,
        before,
        scheme: 'the endpoint',
        tryTimestampHeaders: ts === null,
        tryTextKey: false,
      },
      ts === null ? undefined : { ts, toleranceSec: params.toleranceSec, header: tsHeader as string },
    );
  if (ts !== null) assertFresh(ts, req, params.toleranceSec, tsHeader as string);
}

function verifyStripe(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const name = 'stripe-signature';
  const h = header(req, name);
  if (!h) missing('signature_missing', 'Missing the Stripe-Signature header.', name);
  let t: string | null = null;
  const v1: Buffer[] = [];
  let undecoded: string | null = null;
  for (const item of h.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 1) continue;
    const k = item.slice(0, eq).trim();
    const v = item.slice(eq + 1).trim();
    if (k === 't') t = v;
    else if (k === 'v1') {
      const b = decodeSig(v, 'hex');
      if (b) v1.push(b);
      else undecoded ??= v;
    }
  }
  const ts = checkTimestamp(t, 'Stripe-Signature t=', name);
  if (v1.length === 0)
    malformed(
      'Stripe-Signature has no v1=<hex> signature.',
      name,
      undecoded === null
        ? { check: 'header_malformed', detail: 'Stripe-Signature has a timestamp but no v1=<hex> signature.' }
        : signatureShape(undecoded, 'hex'),
    );
  if (
    !anyMatch(
      v1,
      secrets.map((s) => s.hmacKey.digest([`${ts.text}.`, req.raw])),
    )
  )
    mismatch(
      name,
      signedContentOf('stripe') as string,
      {
        sigs: v1,
        secrets,
        req,
        before: `${ts.text}.`,
        scheme: 'Stripe',
        tryTimestampHeaders: false,
        tryTextKey: false,
      },
      { ts, toleranceSec: config.toleranceSec ?? DEFAULT_TOLERANCE_SEC, header: 'stripe-signature t=' },
    );
  assertFresh(ts, req, config.toleranceSec ?? DEFAULT_TOLERANCE_SEC, name);
}

/** Standard Webhooks key: the base64 part after `whsec_`, decoded. */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

function verifyStandardWebhooks(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const svix = req.headers.has('svix-signature') && !req.headers.has('webhook-signature');
  const p = svix ? 'svix' : 'webhook';
  const name = `${p}-signature`;
  const sigHeader = header(req, name);
  if (!sigHeader) missing('signature_missing', 'Missing the webhook-signature (or svix-signature) header.', name);
  const id = header(req, `${p}-id`);
  if (!id) missing('signature_malformed', `Missing the ${p}-id header (it is part of the signed content).`, `${p}-id`);
  const tol = config.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const ts = checkTimestamp(header(req, `${p}-timestamp`), `${p}-timestamp`, `${p}-timestamp`);
  const sigs: Buffer[] = [];
  let undecoded: string | null = null;
  for (const part of sigHeader.split(' ')) {
    const comma = part.indexOf(',');
    if (comma < 0 || part.slice(0, comma) !== 'v1') continue;
    const b = decodeSig(part.slice(comma + 1), 'base64');
    if (b) sigs.push(b);
    else undecoded ??= part.slice(comma + 1);
  }
  if (sigs.length === 0)
    malformed(
      `${p}-signature has no "v1,<base64>" signature.`,
      name,
      undecoded === null
        ? { check: 'header_malformed', detail: `${name} has no "v1,<base64>" signature (other schemes are ignored).` }
        : signatureShape(undecoded, 'base64'),
    );
  if (
    !anyMatch(
      sigs,
      secrets.map((s) => s.hmacKey.digest([`${id}.${ts.text}.`, req.raw])),
    )
  )
    mismatch(
      name,
      signedContentOf('standard_webhooks') as string,
      {
        sigs,
        secrets,
        req,
        before: `${id}.${ts.text}.`,
        scheme: 'Standard Webhooks',
        tryTimestampHeaders: false,
        tryTextKey: true,
      },
      { ts, toleranceSec: tol, header: `${p}-timestamp` },
    );
  assertFresh(ts, req, tol, `${p}-timestamp`);
}

function verifySlack(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const name = 'x-slack-signature';
  const sig = header(req, name);
  if (!sig) missing('signature_missing', 'Missing the X-Slack-Signature header.', name);
  const tol = config.toleranceSec ?? DEFAULT_TOLERANCE_SEC;
  const tsName = 'x-slack-request-timestamp';
  const ts = checkTimestamp(header(req, tsName), 'X-Slack-Request-Timestamp', tsName);
  const b = sig.startsWith('v0=') ? decodeSig(sig.slice(3), 'hex') : null;
  if (!b)
    malformed(
      'X-Slack-Signature must be "v0=<hex>".',
      name,
      sig.startsWith('v0=')
        ? signatureShape(sig.slice(3), 'hex')
        : { check: 'wrong_prefix', detail: 'The X-Slack-Signature value does not start with "v0=".' },
    );
  if (
    !anyMatch(
      [b],
      secrets.map((s) => s.hmacKey.digest([`v0:${ts.text}:`, req.raw])),
    )
  )
    mismatch(
      name,
      signedContentOf('slack') as string,
      {
        sigs: [b],
        secrets,
        req,
        before: `v0:${ts.text}:`,
        scheme: 'Slack',
        tryTimestampHeaders: false,
        tryTextKey: false,
      },
      { ts, toleranceSec: tol, header: tsName },
    );
  assertFresh(ts, req, tol, tsName);
}

function verifyStaticHeader(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const name = config.staticHeader?.header ?? 'x-flowport-token';
  const given = header(req, name);
  if (!given) missing('credentials_missing', `Missing the ${name} header.`, name);
  if (
    !anyMatch(
      [Buffer.from(given)],
      secrets.map((s) => Buffer.from(s.value)),
    )
  ) {
    throw new AuthRefusal('credentials_invalid', `The ${name} value does not match.`, {
      check: 'value_mismatch',
      detail: `The ${name} value (${given.length} characters) matches none of the ${secrets.length} active secret${secrets.length === 1 ? '' : 's'}.`,
      header: name,
      active_secrets: secrets.length,
    });
  }
}

function verifyBasic(config: EndpointConfig, secrets: readonly VerifySecret[], req: VerifyRequest): void {
  const auth = header(req, 'authorization');
  if (!auth) missing('credentials_missing', 'Missing an Authorization: Basic header.', 'authorization');
  if (!/^basic\s+/i.test(auth))
    throw new AuthRefusal('credentials_missing', 'Missing an Authorization: Basic header.', {
      check: 'wrong_prefix',
      detail: 'The Authorization header is present but not the Basic scheme ("Basic base64(user:password)").',
      header: 'authorization',
    });
  const decoded = Buffer.from(auth.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  const pass = colon < 0 ? '' : decoded.slice(colon + 1);
  const userOk = safeEqual(user, config.basic?.username ?? '');
  const passOk = anyMatch(
    [Buffer.from(pass)],
    secrets.map((s) => Buffer.from(s.value)),
  );
  if (!(userOk && passOk)) {
    const n = secrets.length;
    const tried = `${n} active secret${n === 1 ? '' : 's'}`;
    throw new AuthRefusal('credentials_invalid', 'The Basic user or password does not match.', {
      check: colon < 0 ? 'header_malformed' : 'value_mismatch',
      detail:
        colon < 0
          ? 'The Basic credentials do not decode to "user:password".'
          : userOk
            ? `The user matches; the password matches none of the ${tried}.`
            : passOk
              ? `The password matches one of the ${tried}, but the user does not.`
              : `Neither the user nor the password matches (the password was compared with ${tried}).`,
      header: 'authorization',
      active_secrets: n,
    });
  }
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
    throw new AuthRefusal('credentials_invalid', 'The endpoint has no active secret; rotate it to set one.', {
      check: 'no_active_secret',
      detail: 'The endpoint has no active secret (its previous one expired or none was set); rotate it to set one.',
      active_secrets: 0,
    });
  VERIFIERS[config.authMode](config, secrets, req);
}
