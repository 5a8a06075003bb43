// The CLI's exit codes, defined once. The parser, the HTTP error mapping and the
// table on /reference/cli/ all read this list, so scripts can branch on them.

export interface ExitCodeDef {
  code: number;
  name: string;
  meaning: string;
}

export const EXIT = {
  ok: { code: 0, name: 'ok', meaning: 'Success.' },
  failed: {
    code: 1,
    name: 'failed',
    meaning:
      'The command ran but what it checked or asked for failed: `doctor` found a problem, `audit verify` found a broken chain, or the server turned the request down without a refusal (for example `idempotency_key_reused`).',
  },
  usage: {
    code: 2,
    name: 'usage',
    meaning:
      'Usage error: unknown command, missing or malformed option or argument, or input the server rejected as invalid (HTTP 400, 413, 415).',
  },
  auth: {
    code: 3,
    name: 'auth',
    meaning:
      'No usable grant: the token is missing, unreadable, invalid, expired or revoked (HTTP 401). The merchant creates a new grant on the merchant page (`/merchant`, Grants).',
  },
  refusal: {
    code: 4,
    name: 'refusal',
    meaning:
      "Refused: outside the grant's scopes, a plan or rate limit, the target's state, a safety rule or the product boundary. The printed refusal names the reason, the docs URL and the next step.",
  },
  notFound: {
    code: 5,
    name: 'not_found',
    meaning: 'The object does not exist or belongs to another shop (HTTP 404).',
  },
  server: {
    code: 6,
    name: 'server_error',
    meaning: 'Flowport answered with a server error (HTTP 5xx) or something that is not Flowport JSON.',
  },
  unreachable: {
    code: 7,
    name: 'unreachable',
    meaning:
      'Flowport could not be reached at the base URL (not running, wrong `FLOWPORT_BASE_URL` / `--base-url`, network).',
  },
} as const satisfies Record<string, ExitCodeDef>;

export const EXIT_CODES: readonly ExitCodeDef[] = Object.values(EXIT);

/** Problem details as far as the exit code needs them. */
export interface ProblemLike {
  status?: number;
  refusal?: unknown;
}

/** Maps an HTTP error answer to an exit code: 401 auth, 404 not found, refusals, 5xx, bad input, the rest. */
export function exitCodeForHttp(status: number, problem: ProblemLike | null): number {
  if (status === 401) return EXIT.auth.code;
  if (status === 404) return EXIT.notFound.code;
  if (problem?.refusal) return EXIT.refusal.code;
  if (status >= 500) return EXIT.server.code;
  if (status === 400 || status === 413 || status === 415) return EXIT.usage.code;
  return EXIT.failed.code;
}
