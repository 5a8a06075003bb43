// Which authentication check refused a request (issue 42, ADR 0320): a stable check name and safe
// facts (the header checked, the tolerance and how far off a timestamp was, how many active
// secrets were tried) that a refused request's receipt keeps as `failure`. Never the secret, the
// signature value or the body. Built only where verification throws (intake/verify.ts), so a request
// that verifies pays nothing for it.
import type { ErrorCode } from './catalog.ts';
import { AppError } from './problem.ts';

/** What each check means, in the order a request is checked. Docs and the contract list these. */
export const AUTH_FAILURE_CHECK_TEXT = {
  no_active_secret: 'The endpoint has no active secret to verify with (rotate it to set one).',
  header_missing: 'A header the auth mode needs (signature, credentials, or a signed id) is absent or empty.',
  header_malformed: 'The header is present but not in the shape the auth mode expects (e.g. no `v1=` signature).',
  wrong_prefix: 'The value does not start with the expected prefix or scheme (e.g. `sha256=`, `v0=`, `Basic `).',
  wrong_encoding: 'The signature is not in the expected encoding (hex or base64).',
  wrong_length: 'The signature decodes, but not to the 32 bytes of an HMAC-SHA256.',
  timestamp_missing: 'The signed timestamp is absent.',
  timestamp_malformed: 'The signed timestamp is not integer Unix seconds.',
  timestamp_outside_tolerance:
    "The signature matches, but its timestamp is further from Flowport's clock than the tolerance.",
  value_mismatch:
    'The signature or credential is well formed but matches none of the active secrets: the sender signs other bytes or uses another secret.',
} as const;

export type AuthFailureCheck = keyof typeof AUTH_FAILURE_CHECK_TEXT;
export const AUTH_FAILURE_CHECKS = Object.keys(AUTH_FAILURE_CHECK_TEXT) as AuthFailureCheck[];

/**
 * A refused signature's `failure.hint`: a well-known alternative the sender's signature DOES match,
 * tried only after verification failed, only where the answer is cheap and certain (an HMAC that
 * matches). The check it follows, then what it means. Docs and the contract list these.
 */
export const AUTH_FAILURE_HINTS = {
  previous_secret_expired: {
    after: 'value_mismatch',
    text: "The signature matches the endpoint's previous secret, whose rotation overlap has ended: the sender still signs with the old secret. Give it the current one.",
  },
  timestamp_not_signed: {
    after: 'value_mismatch',
    text: 'The HMAC of the body alone (without the timestamp) matches an active secret: the sender does not sign the timestamp the endpoint expects.',
  },
  timestamp_signed: {
    after: 'value_mismatch',
    text: 'The HMAC of `{timestamp}.{body}`, with a timestamp header the request carries, matches an active secret: the sender signs a timestamp the endpoint is not configured for (set `hmac.timestamp_header`).',
  },
  trailing_newline: {
    after: 'value_mismatch',
    text: 'The HMAC of the body with its final newline removed (or one added) matches: the sender changes the body after signing (e.g. a file sent with a trailing newline).',
  },
  secret_not_decoded: {
    after: 'value_mismatch',
    text: 'Standard Webhooks: the HMAC keyed with the whole `whsec_…` text matches; the scheme keys with the base64-decoded part after `whsec_` (use a Standard Webhooks library).',
  },
  other_encoding: {
    after: 'wrong_encoding',
    text: 'The signature, decoded in the other encoding (base64 instead of hex, or hex instead of base64), matches an active secret: the sender encodes differently (set `hmac.encoding`).',
  },
  unexpected_prefix: {
    after: 'wrong_encoding',
    text: 'The signature after a prefix (e.g. `sha256=`) matches an active secret: the sender adds a prefix the endpoint does not expect (set `hmac.prefix`).',
  },
  prefix_missing: {
    after: 'wrong_prefix',
    text: 'The value without the expected prefix is a signature that matches an active secret: the sender leaves the prefix out.',
  },
} as const satisfies Record<string, { after: AuthFailureCheck; text: string }>;

export type AuthFailureHintCode = keyof typeof AUTH_FAILURE_HINTS;
export const AUTH_FAILURE_HINT_CODES = Object.keys(AUTH_FAILURE_HINTS) as AuthFailureHintCode[];

/** A hint as a receipt shows it: its code and a sentence for this request (header names, times). */
export interface AuthFailureHint {
  code: AuthFailureHintCode;
  detail: string;
}

/** A refused request's failure detail as its receipt shows it. */
export interface AuthFailure {
  check: AuthFailureCheck;
  detail: string;
  /** The header checked (lower case), when one was. */
  header: string | null;
  /** The endpoint's timestamp tolerance, for timestamp checks. */
  tolerance_sec: number | null;
  /** The signed timestamp minus Flowport's clock, in seconds (negative: in the past). */
  timestamp_offset_sec: number | null;
  /** How many active secrets the value was compared with (2 during a rotation overlap). */
  active_secrets: number | null;
  /** The well-known alternative the signature matches, when one does (AUTH_FAILURE_HINTS). */
  hint: AuthFailureHint | null;
}

type FailureFacts = Pick<AuthFailure, 'check' | 'detail'> & Partial<AuthFailure>;

function failureOf(f: FailureFacts): AuthFailure {
  return {
    check: f.check,
    detail: f.detail,
    // Lower-cased here, on the failure path: callers pass header names as configured.
    header: f.header?.toLowerCase() ?? null,
    tolerance_sec: f.tolerance_sec ?? null,
    timestamp_offset_sec: f.timestamp_offset_sec ?? null,
    active_secrets: f.active_secrets ?? null,
    hint: f.hint ?? null,
  };
}

/**
 * An intake refusal at the auth stage: the error the sender is answered with (code and its own
 * detail, unchanged) and the failure its receipt records.
 */
export class AuthRefusal extends AppError {
  readonly failure: AuthFailure;
  constructor(code: ErrorCode, senderDetail: string, failure: FailureFacts, extra?: Record<string, unknown>) {
    super(code, { detail: senderDetail, ...(extra ? { extra } : {}) });
    this.failure = failureOf(failure);
  }
}

/**
 * Why a signature string that did not decode is refused (called only after it failed to decode):
 * not the encoding, or not the length of an HMAC-SHA256. The value itself is never echoed.
 */
export function signatureShape(
  value: string,
  encoding: 'hex' | 'base64',
): { check: 'wrong_encoding' | 'wrong_length'; detail: string } {
  const isHex = /^[0-9a-fA-F]*$/.test(value) && value.length % 2 === 0;
  const isB64 = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value);
  if (encoding === 'hex' ? !isHex : !isB64) {
    // A signature of the right size in the other encoding: the sender's encoding setting differs.
    const other =
      encoding === 'hex'
        ? isB64 && Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64').length === 32
        : isHex && value.length === 64;
    return {
      check: 'wrong_encoding',
      detail: `The signature (${value.length} characters) is not ${encoding === 'hex' ? 'hex (0-9, a-f)' : 'base64'}${other ? `; it is a ${encoding === 'hex' ? 'base64' : 'hex'} HMAC-SHA256, so the sender encodes differently` : ''}.`,
    };
  }
  const bytes = encoding === 'hex' ? value.length / 2 : Buffer.from(value, 'base64').length;
  return {
    check: 'wrong_length',
    detail: `The signature decodes to ${bytes} bytes; an HMAC-SHA256 is 32 (${encoding === 'hex' ? '64 hex characters' : '44 base64 characters'}).`,
  };
}

/** The coarse check an error code names: for refused receipts stored before failures were kept. */
const CHECK_OF_CODE: Partial<Record<string, AuthFailureCheck>> = {
  signature_missing: 'header_missing',
  credentials_missing: 'header_missing',
  signature_malformed: 'header_malformed',
  timestamp_missing: 'timestamp_missing',
  timestamp_invalid: 'timestamp_malformed',
  timestamp_outside_tolerance: 'timestamp_outside_tolerance',
  signature_mismatch: 'value_mismatch',
  credentials_invalid: 'value_mismatch',
};

/**
 * A receipt's failure: the stored one, or for a refusal at the auth stage stored before failures
 * were kept (migration 1710), the check its error code names; null for everything else.
 */
export function receiptFailure(stored: string | null, errorCode: string | null): AuthFailure | null {
  if (stored) return failureOf(JSON.parse(stored) as FailureFacts);
  const check = errorCode ? CHECK_OF_CODE[errorCode] : undefined;
  return check
    ? failureOf({ check, detail: `Recorded before receipts kept the failed check: ${AUTH_FAILURE_CHECK_TEXT[check]}` })
    : null;
}
