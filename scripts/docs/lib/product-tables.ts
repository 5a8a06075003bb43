// Tables that hand-written guides embed with `<!-- generated:NAME -->`, rendered
// from the code that defines the behaviour (lifecycle states, support codes,
// retry schedule, Flow trigger variants), so a guide cannot drift from it.
import { DEFAULTS, ENV } from '../../../api/src/config.ts';
import { errorDocsPath } from '../../../api/src/docs-paths.ts';
import { ERROR_CATALOG, type ErrorCode } from '../../../api/src/errors/catalog.ts';
import { INTAKE_SUPPORT_CODES, intakeSupportCode } from '../../../api/src/errors/codes/intake.ts';
import {
  AUTH_FAILURE_CHECK_TEXT,
  AUTH_FAILURE_CHECKS,
  AUTH_FAILURE_HINT_CODES,
  AUTH_FAILURE_HINTS,
} from '../../../api/src/errors/auth-failure.ts';
import { AUTH_MODE_LIST, signedContentOf } from '../../../api/src/intake/auth-modes.ts';
import { VERIFY_ORDER } from '../../../api/src/intake/verify.ts';
import { FLOW_PAYLOAD_LIMIT_BYTES } from '../../../api/src/handoff/payload.ts';
import {
  EVENT_STATE_DESCRIPTIONS,
  EVENT_STATES,
  retrySchedule,
  SHOP_HOLDS,
  SUPPORT_CODES,
  TERMINAL_STATES,
  UNAVAILABLE_SHOP,
  UNAVAILABLE_SHOP_STATUSES,
} from '../../../api/src/handoff/outcomes.ts';
import { REPLAY_UNAVAILABLE_REASONS } from '../../../api/src/handoff/lifecycle.ts';
import { loadTriggerDefinitions } from '../../../api/src/handoff/triggers.ts';
import { code, table } from './markdown.ts';

export function renderLifecycleTable(): string {
  return table(
    ['State', 'Final?', 'What it means'],
    EVENT_STATES.map((s) => [code(s), TERMINAL_STATES.includes(s) ? 'yes' : 'no', EVENT_STATE_DESCRIPTIONS[s]]),
  );
}

/** The support codes intake records on receipts (FP-I-…): where a request stopped at intake. */
export function renderIntakeSupportCodeTable(): string {
  return table(
    ['Support code', 'Meaning'],
    Object.values(INTAKE_SUPPORT_CODES).map((s) => [code(s.code), s.meaning]),
  );
}

/** The size and time limits a sender's request meets at intake, with their defaults and refusals. */
export function renderIntakeLimitsTable(): string {
  const refusal = (c: ErrorCode) =>
    `${ERROR_CATALOG[c].status} [\`${c}\`](${errorDocsPath(c)}) (${code(intakeSupportCode(c))})`;
  const n = (v: number) => v.toLocaleString('en-US');
  return table(
    ['Limit', 'Default', 'Set by', 'Past it'],
    [
      [
        'Request body',
        `${n(DEFAULTS.maxBodyBytes)} bytes${DEFAULTS.maxBodyBytes % 2 ** 20 === 0 ? ` (${DEFAULTS.maxBodyBytes / 2 ** 20} MiB)` : ''}`,
        code(ENV.maxBodyBytes),
        `${refusal('payload_too_large')}; the connection closes`,
      ],
      [
        'Time to send the whole request, headers and body',
        `${n(DEFAULTS.httpRequestTimeoutMs / 1000)} s`,
        code(ENV.httpRequestTimeoutMs),
        `${refusal('request_timeout')}; the connection closes`,
      ],
      [
        'Flow payload built from the event',
        `${n(FLOW_PAYLOAD_LIMIT_BYTES)} bytes`,
        "Shopify Flow's limit",
        refusal('flow_payload_too_large'),
      ],
    ],
  );
}

/** Every `failure.check` a refused request's receipt can carry, in the order intake checks. */
export function renderAuthFailureChecks(): string {
  return table(
    ['`failure.check`', 'What failed'],
    AUTH_FAILURE_CHECKS.map((c) => [code(c), AUTH_FAILURE_CHECK_TEXT[c]]),
  );
}

/** Every `failure.hint` a refused receipt can carry, with the check it follows (AUTH_FAILURE_HINTS). */
export function renderAuthFailureHints(): string {
  return table(
    ['`failure.hint.code`', 'After the check', 'What matched'],
    AUTH_FAILURE_HINT_CODES.map((h) => [code(h), code(AUTH_FAILURE_HINTS[h].after), AUTH_FAILURE_HINTS[h].text]),
  );
}

/** The order each auth mode checks a request in (VERIFY_ORDER, which the verifiers follow), and what it signs. */
export function renderAuthCheckOrder(): string {
  return table(
    ['Mode', 'Signed content', 'Checks, first to last'],
    AUTH_MODE_LIST.map((f) => [
      code(f.mode),
      f.mode === 'hmac_sha256'
        ? `${signedContentOf('hmac_sha256')}, or ${signedContentOf('hmac_sha256', 'x-ts')} when a timestamp header (here \`x-ts\`) is configured`
        : (signedContentOf(f.mode) ?? 'nothing (the credential is compared as sent)'),
      VERIFY_ORDER[f.mode].map((c) => code(c)).join(' → '),
    ]),
  );
}

/** Every `replay.reason` an event read can carry, with the text the product answers. */
export function renderReplayUnavailableTable(): string {
  return table(
    ['Reason', 'Meaning and what to do'],
    Object.entries(REPLAY_UNAVAILABLE_REASONS).map(([reason, text]) => [code(reason), text]),
  );
}

/** "403", or "403, or ACCESS_DENIED on the Flow call (HTTP 200)" when the GraphQL form counts too. */
function shopifyAnswer(u: { httpStatus: number; graphqlCode?: string }): string {
  return u.graphqlCode
    ? `${u.httpStatus}, or ${code(u.graphqlCode)} on the Flow call (HTTP 200)`
    : String(u.httpStatus);
}

/** The shop statuses in which Shopify refuses the store itself: its events are held and probed (ADR 0201). */
export function renderHeldShopTable(): string {
  return table(
    ['`connection_status`', 'Shopify answered', 'Support code', 'Error code', 'Recovery action', 'What to do'],
    UNAVAILABLE_SHOP_STATUSES.map((status) => {
      const hold = SHOP_HOLDS[status];
      return [
        code(status),
        shopifyAnswer(UNAVAILABLE_SHOP[status]),
        code(SUPPORT_CODES[hold.support].code),
        `[${code(hold.errorCode)}](${errorDocsPath(hold.errorCode)})`,
        code(hold.action),
        hold.recovery,
      ];
    }),
  );
}

export function renderSupportCodeTable(): string {
  return table(
    ['Support code', 'Event state', 'Error code', 'Meaning'],
    Object.values(SUPPORT_CODES).map((s) => [
      code(s.code),
      code(s.state),
      s.errorCode ? `[${code(s.errorCode)}](${errorDocsPath(s.errorCode)})` : '—',
      s.meaning,
    ]),
  );
}

function duration(ms: number): string {
  if (ms < 600_000) return `${Math.round(ms / 1000)} s`;
  const min = ms / 60_000;
  return Number.isInteger(min) ? `${min} min` : `${min.toFixed(1)} min`;
}

export function renderRetrySchedule(): string {
  const rows = retrySchedule();
  return [
    `By default an event gets ${rows.length + 1} delivery attempts in total. After a retryable failure the next attempt waits a random time between zero and the window below (exponential backoff with full jitter), so many events failing together do not retry together.`,
    '',
    table(
      ['After attempt', 'Next attempt within'],
      rows.map((r) => [String(r.afterAttempt), duration(r.maxDelayMs)]),
    ),
  ].join('\n');
}

export function renderTriggerVariants(): string {
  const defs = loadTriggerDefinitions();
  const parts: string[] = [
    table(
      ['Trigger variant', 'Flow trigger', 'Handle', 'Use it for'],
      defs.map((d) => [code(d.variant), d.name, code(d.handle), d.description]),
    ),
  ];
  for (const d of defs) {
    parts.push(
      '',
      `### ${d.name}`,
      '',
      `Variant ${code(d.variant)}, handle ${code(d.handle)}, defined in ${code(d.file)}. Fields Flow receives:`,
      '',
      table(
        ['Payload key', 'Flow field type', 'Description'],
        d.fields.map((f) => [code(f.payloadKey), code(f.type), f.description]),
      ),
    );
  }
  return parts.join('\n');
}
