import { z } from '@hono/zod-openapi';
import { AUTH_MODES } from '../../store/tables/endpoints.ts';
import { Timestamp, nullableText, wholeNumber } from '../read-schemas.ts';
import {
  AUTH_FAILURE_CHECK_TEXT,
  AUTH_FAILURE_CHECKS,
  AUTH_FAILURE_HINT_CODES,
  AUTH_FAILURE_HINTS,
} from '../../errors/auth-failure.ts';
import { ATTEMPT_COUNT_TEXT } from '../events/schemas.ts';

const nullableCount = (description: string) => z.number().int().nullable().describe(description);

export const ReceiptFailure = z
  .object({
    check: z
      .enum(AUTH_FAILURE_CHECKS as [string, ...string[]])
      .describe(
        `Which authentication check refused the request (stable): ${AUTH_FAILURE_CHECKS.map((c) => `\`${c}\`: ${AUTH_FAILURE_CHECK_TEXT[c]}`).join(' ')}`,
      ),
    detail: z
      .string()
      .describe(
        'What was wrong, in plain words (header name, lengths, how far off, how many secrets were tried): never the secret, the signature value or the body.',
      ),
    header: nullableText('The header that was checked (lower case); null when none.'),
    tolerance_sec: nullableCount(
      "The endpoint's timestamp tolerance in seconds, for timestamp checks and for a `value_mismatch` on a request that carried a timestamp; otherwise null.",
    ),
    timestamp_offset_sec: nullableCount(
      "The request's timestamp minus Flowport's clock, in seconds (negative: in the past), for `timestamp_outside_tolerance`, and for a `value_mismatch` on a request that carried a timestamp (then `detail` says whether it would pass once the signature is fixed); otherwise null.",
    ),
    active_secrets: nullableCount(
      'How many active secrets the value was compared with (2 during a rotation overlap, 0 when none is set); null when no comparison was made.',
    ),
    hint: z
      .object({
        code: z
          .enum(AUTH_FAILURE_HINT_CODES as [string, ...string[]])
          .describe(
            `The well-known alternative the signature does match (stable): ${AUTH_FAILURE_HINT_CODES.map((h) => `\`${h}\` (after \`${AUTH_FAILURE_HINTS[h].after}\`): ${AUTH_FAILURE_HINTS[h].text}`).join(' ')}`,
          ),
        detail: z.string().describe('What matched and what to change, for this request (header names, times).'),
      })
      .nullable()
      .describe(
        'Worked out only when verification failed, from a few cheap and certain alternatives (an HMAC matches or not): the body without the timestamp, a timestamp header not configured, an expired previous secret, a trailing newline, the other encoding, a prefix too many or missing, a Standard Webhooks secret used as text. Null when none matches.',
      ),
  })
  .openapi('ReceiptFailure');

/** A receipt's `failure`, as every read that shows one has it (one instance: one component in the contract). */
export const ReceiptFailureOrNull = ReceiptFailure.nullable().describe(
  'For a request refused by authentication (`auth_result` `failed` or `missing`): which check failed and why. Null for accepted requests and for refusals at other stages (their `error_code` says why).',
);

export const Receipt = z
  .object({
    id: z.string().openapi({ example: 'rcpt_01jd0000000000000000000000', description: 'Receipt id (`rcpt_…`).' }),
    event_id: nullableText(
      "Null when no event was stored: intake rejected the request, or answered a sender's URL-verification handshake.",
    ),
    endpoint_id: z.string().describe('Endpoint the request was sent to (`ep_…`).'),
    auth_mode: z
      .enum(AUTH_MODES)
      .nullable()
      .describe("The endpoint's auth mode: how the request was verified (null only if the endpoint row is gone)."),
    request_id: z.string().describe("Id of the sender's request (the `X-Request-Id` intake answered with)."),
    received_at: Timestamp.describe('When intake received the request (ISO 8601, UTC).'),
    auth_result: z
      .string()
      .describe('Result of checking the signature or credentials (e.g. `verified`), or why it failed.'),
    validation_result: z
      .string()
      .describe('Result of validating the body against the mapping (e.g. `valid`), or why it failed.'),
    dedupe_decision: z
      .string()
      .describe(
        'Dedupe result: `unique`, `no_external_id` (no sender id to dedupe on), `not_checked` (refused earlier), or a duplicate decision.',
      ),
    endpoint_config_version: wholeNumber('Endpoint configuration version the request was checked against.'),
    http_status: wholeNumber('The HTTP status Flowport answered the sender with.'),
    error_code: nullableText('Catalog error code when intake refused the request; null when accepted.'),
    support_code: nullableText(
      "Intake support code to quote to support: `FP-I-OK` accepted (test events included), `FP-I-DUP` duplicate, `FP-I-HS` handshake, or the refusal's family (e.g. `FP-I-SIG`). Null only on receipts written before every receipt carried one.",
    ),
    body_size: wholeNumber('Size of the request body in bytes.'),
    body_sha256: nullableText(
      'SHA-256 of the body as received (hex), refused requests included; null when no body was read (refused before reading it, or it never arrived whole).',
    ),
    failure: ReceiptFailureOrNull,
    handoff: z
      .object({
        state: z.string().describe("The event's lifecycle state now (e.g. `queued`, `delivered`)."),
        support_code: nullableText("The event's support code; null when it went through."),
        error_code: nullableText('Catalog error code of the last delivery failure; null when none.'),
        delivered_at: Timestamp.nullable().describe('When Flow accepted the event; null until delivered.'),
        attempt_count: wholeNumber(ATTEMPT_COUNT_TEXT),

        flow_readiness: z
          .object({
            trigger: z.string().describe("The Flow trigger handle of the event's endpoint."),
            enabled_workflow: z
              .enum(['yes', 'no', 'unknown'])
              .describe(
                "Now (at `as_of`): whether an enabled Shopify Flow workflow uses the trigger in this store, per Flow's newest trigger lifecycle callback; `unknown` until Flow sends one. `no`: the trigger's events end `no_workflow` without a call to Shopify.",
              ),
            since: Timestamp.nullable().describe("Now: the time of Flow's newest signal; null when unknown."),
            as_of: Timestamp.describe(
              'When this readiness was read (this answer): `enabled_workflow` and `since` are the readiness now, not when the request came in.',
            ),
            at_receipt: z
              .object({
                enabled_workflow: z
                  .enum(['yes', 'no', 'unknown'])
                  .describe('What Flow had last said when the request was received.'),
                since: Timestamp.nullable().describe('The time of that signal, as Flow dated it; null when none yet.'),
              })
              .describe(
                "The trigger's readiness when the request was received (`received_at`), from the readiness history (listFlowReadinessHistory): the newest signal Flowport had by then.",
              ),
          })
          .describe(
            "Flow readiness of the event's trigger: now (`as_of`), and when the request was received (`at_receipt`).",
          ),
      })
      .nullable()
      .describe('Where the handoff to Shopify Flow stands now; null when no event was stored.'),
  })
  .openapi('Receipt');
