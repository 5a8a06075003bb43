// failure.hint (issue 42, wave 2): after a signature failed, which well-known alternative it does
// match. Only on the failure path, so a request that verifies pays nothing; only alternatives that
// are cheap (a few HMACs over the body already in memory) and certain (an HMAC matches or it does
// not). The hint names headers, encodings and times, never the secret, the signature or the body.
import type { AuthFailureHint, AuthFailureHintCode } from '../errors/auth-failure.ts';
import { safeEqual } from '../lib/crypto.ts';
import { HmacKey, type VerifyRequest, type VerifySecret } from './verify.ts';

/** Timestamp headers senders commonly sign as `{timestamp}.{body}` (tried when none is configured). */
const COMMON_TIMESTAMP_HEADERS = [
  'x-timestamp',
  'x-webhook-timestamp',
  'x-signature-timestamp',
  'x-request-timestamp',
  'webhook-timestamp',
  'timestamp',
] as const;

/** What a failed signature was checked against: the signatures given and how the signed bytes are made. */
export interface MismatchFacts {
  sigs: readonly Buffer[];
  secrets: readonly VerifySecret[];
  req: VerifyRequest;
  /** What precedes the body in the signed content (`{ts}.`), or null when the body alone is signed. */
  before: string | null;
  /** The mode's name for hints ("the endpoint", "Stripe" …). */
  scheme: string;
  /** hmac_sha256 without a timestamp header: timestamps the request carries are worth a try. */
  tryTimestampHeaders: boolean;
  /** Standard Webhooks: try the whole secret text as the key. */
  tryTextKey: boolean;
}

function matches(sigs: readonly Buffer[], keys: readonly HmacKey[], parts: readonly (string | Uint8Array)[]): boolean {
  for (const k of keys) {
    const d = k.digest(parts);
    for (const s of sigs) if (safeEqual(s, d)) return true;
  }
  return false;
}

const hint = (code: AuthFailureHintCode, detail: string): AuthFailureHint => ({ code, detail });

/** The alternative a well-formed signature that matched no active secret does match, if any. */
export function mismatchHint(f: MismatchFacts): AuthFailureHint | null {
  const keys = f.secrets.map((s) => s.hmacKey);
  const signed = (body: Uint8Array) => (f.before === null ? [body] : [f.before, body]);
  const expired = (f.req.expired ?? []).find((e) => matches(f.sigs, [e.secret.hmacKey], signed(f.req.raw)));
  if (expired)
    return hint(
      'previous_secret_expired',
      `The signature matches the endpoint's previous secret, whose rotation overlap ended at ${new Date(expired.expiredAt).toISOString()}: the sender still signs with the old secret. Give it the current one.`,
    );
  if (f.before !== null && matches(f.sigs, keys, [f.req.raw]))
    return hint(
      'timestamp_not_signed',
      `The HMAC of the body alone (without the timestamp the signed content puts before it) matches an active secret: the sender does not sign the timestamp ${f.scheme} expects. ${f.scheme === 'the endpoint' ? 'Have the sender sign `{timestamp}.{body}`, or remove hmac.timestamp_header from the endpoint (an endpoint edit) if it cannot.' : `Sign as ${f.scheme} does (its library does it).`}`,
    );
  if (f.tryTimestampHeaders) {
    for (const name of COMMON_TIMESTAMP_HEADERS) {
      const v = f.req.headers.get(name)?.trim();
      if (v && /^\d{9,12}$/.test(v) && matches(f.sigs, keys, [`${v}.`, f.req.raw]))
        return hint(
          'timestamp_signed',
          `The HMAC of \`{${name}}.{body}\` matches an active secret: the sender signs the timestamp it sends in ${name}. Set the endpoint's hmac.timestamp_header to ${name} (an endpoint edit); the timestamp is then checked too.`,
        );
    }
  }
  const raw = f.req.raw;
  const trimmed = raw.at(-1) === 0x0a ? raw.subarray(0, raw.at(-2) === 0x0d ? -2 : -1) : null;
  const alt = trimmed ?? Buffer.concat([raw, Buffer.from('\n')]);
  if (matches(f.sigs, keys, signed(alt)))
    return hint(
      'trailing_newline',
      trimmed
        ? 'The HMAC of the body without its final newline matches an active secret: the body was signed, then a newline was added (e.g. curl --data-binary @file with a file ending in a newline). Send exactly the bytes that were signed.'
        : 'The HMAC of the body with a final newline matches an active secret: the sender signed a newline it does not send. Sign exactly the bytes that are sent.',
    );
  if (f.tryTextKey) {
    const textKeys = f.secrets.map((s) => new HmacKey(Buffer.from(s.value, 'utf8')));
    if (matches(f.sigs, textKeys, signed(raw)))
      return hint(
        'secret_not_decoded',
        'The HMAC keyed with the whole whsec_… secret text matches: Standard Webhooks keys with the base64-decoded part after whsec_. Use a Standard Webhooks library (or decode the secret) on the sender.',
      );
  }
  return null;
}

/**
 * For a signature that did not decode as configured (hmac_sha256 and its presets): whether it is a
 * matching HMAC in the other encoding, after an unexpected prefix, or without the expected prefix.
 */
export function formatHint(
  value: string,
  expected: { encoding: 'hex' | 'base64'; prefix: string },
  f: Omit<MismatchFacts, 'sigs' | 'scheme' | 'tryTimestampHeaders' | 'tryTextKey'>,
  decode: (value: string, encoding: 'hex' | 'base64') => Buffer | null,
): AuthFailureHint | null {
  const keys = f.secrets.map((s) => s.hmacKey);
  const parts = f.before === null ? [f.req.raw] : [f.before, f.req.raw];
  const other = expected.encoding === 'hex' ? 'base64' : 'hex';
  const asOther = decode(value, other);
  if (asOther && matches([asOther], keys, parts))
    return hint(
      'other_encoding',
      `The signature is a ${other} HMAC-SHA256 that matches an active secret: the sender encodes in ${other}, the endpoint expects ${expected.encoding}. Set hmac.encoding to ${other} (an endpoint edit) or have the sender send ${expected.encoding}.`,
    );
  const m = /^([A-Za-z0-9_-]{1,16}[=:])(.+)$/.exec(value);
  const after = m?.[2] ? (decode(m[2], expected.encoding) ?? decode(m[2], other)) : null;
  if (m && after && matches([after], keys, parts))
    return hint(
      'unexpected_prefix',
      `The signature after "${m[1]}" matches an active secret: the sender adds the prefix "${m[1]}", which the endpoint does not expect. Set hmac.prefix to "${m[1]}" (an endpoint edit).`,
    );
  return null;
}

/** For a value without the expected prefix: whether it is itself a matching signature. */
export function missingPrefixHint(
  value: string,
  expected: { encoding: 'hex' | 'base64'; prefix: string },
  f: Omit<MismatchFacts, 'sigs' | 'scheme' | 'tryTimestampHeaders' | 'tryTextKey'>,
  decode: (value: string, encoding: 'hex' | 'base64') => Buffer | null,
): AuthFailureHint | null {
  const sig = decode(value, expected.encoding);
  const parts = f.before === null ? [f.req.raw] : [f.before, f.req.raw];
  return sig &&
    matches(
      [sig],
      f.secrets.map((s) => s.hmacKey),
      parts,
    )
    ? hint(
        'prefix_missing',
        `The value is a signature that matches an active secret, sent without the "${expected.prefix}" prefix the endpoint expects: have the sender add it${expected.prefix ? ' (or set hmac.prefix to "" on a generic hmac_sha256 endpoint)' : ''}.`,
      )
    : null;
}
