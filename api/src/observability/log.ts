// Structured logs (pino): one JSON line per HTTP request (intake, Agent API, MCP, the rest) and
// one per handoff attempt, each with the request id, shop id, endpoint id and event id where they
// apply, the outcome and the duration. Pretty (pino-pretty, in-process) when stdout is a terminal.
//
// What a line may carry is decided here, by field: ids, route patterns, statuses, error and support
// codes, durations, counts. Never a header value, a token, a secret, a signature, a query string or
// a body: callers pass named facts, not requests. The redact list below is a second net for the
// field names a secret would travel under, should a caller ever pass one.
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { type DestinationStream, type Logger, pino } from 'pino';
import type { Config } from '../config.ts';
import { ID_PREFIXES } from '../ids.ts';

export type { Logger };

/**
 * Field names a secret would travel under: censored at the top level of a line and one level
 * below it (pino's redact paths `name` and `*.name`). Applied by redactFields, a formatter, rather
 * than pino's `redact` option: that compiles a path walker which cost about a twentieth of the
 * intake hot path's CPU (one line per request), and a line is a flat record of named facts.
 * pino applies the bindings formatter to the root logger's bindings only, not to a child's: the
 * one child logger Flowport makes (runtime.ts, an intake endpoint's request lines) binds ids and
 * the route only; another would have to pass its bindings through redactFields itself.
 */
const REDACT = new Set(['token', 'secret', 'signature', 'authorization', 'body', 'payload', 'headers']);
const CENSOR = '[redacted]';

function censored(o: Record<string, unknown>): Record<string, unknown> | null {
  let out: Record<string, unknown> | null = null;
  for (const k in o) {
    if (REDACT.has(k) && Object.hasOwn(o, k)) {
      out ??= { ...o };
      out[k] = CENSOR;
    }
  }
  return out;
}

/** A copy of `o` with every REDACT field (top level, or inside a top-level object) censored; `o` itself when there is none. */
function redactFields(o: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    if (REDACT.has(k)) {
      out ??= { ...o };
      out[k] = CENSOR;
      continue;
    }
    const v = o[k];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const inner = censored(v as Record<string, unknown>);
      if (inner) {
        out ??= { ...o };
        out[k] = inner;
      }
    }
  }
  return out ?? o;
}

export interface LoggerOptions {
  /** Where lines go (tests capture them); default stdout, pretty when it is a terminal. */
  destination?: DestinationStream | Writable;
  /** Force pretty output (default: stdout is a TTY and no destination was given). */
  pretty?: boolean;
}

const LEVELS: Record<Config['logLevel'], string> = { silent: 'silent', info: 'info', debug: 'debug' };

let timeMs = Number.NaN;
let timeField = '';
/**
 * pino's ISO time field (`pino.stdTimeFunctions.isoTime`, the same text), made once per
 * millisecond: a group commit answers its requests in one turn of the loop, so their request lines
 * share a millisecond, and a Date with its ISO string per line was a tenth of the line's cost.
 */
export function isoTimeField(): string {
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    timeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeField;
}

export function createLogger(config: Pick<Config, 'logLevel'>, options: LoggerOptions = {}): Logger {
  const level = LEVELS[config.logLevel] ?? 'info';
  const base = {
    level,
    base: { pid: process.pid },
    timestamp: isoTimeField,
    formatters: {
      level: (label: string) => ({ level: label }),
      log: redactFields,
      bindings: redactFields,
    },
  };
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  if (pretty) {
    // In-process and synchronous: no worker thread, nothing lost when the process exits. Loaded
    // only here: a server writing JSON lines never holds pino-pretty's 30 modules (ADR 1330).
    const PinoPretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    const stream = PinoPretty({
      colorize: process.stdout.isTTY === true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid',
      ...(options.destination ? { destination: options.destination as Writable } : {}),
    });
    return pino(base, stream);
  }
  if (options.destination) return pino(base, options.destination as DestinationStream);
  return pino(base, stdoutDestination());
}

/** How long a line may wait in the buffer before it is written, ms. */
export const LOG_FLUSH_MS = 200;

/**
 * Synchronous stdout, buffered: lines are written in blocks of about 4 KiB (a dozen request lines,
 * one write system call instead of twelve), and at the latest LOG_FLUSH_MS after they were logged;
 * what is buffered is written when the process exits. Measured (issue 31): an asynchronous
 * destination cost the intake hot path more than a blocking write per line, because each write
 * went through libuv's thread pool.
 */
let stdout: ReturnType<typeof pino.destination> | null = null;
function stdoutDestination(): DestinationStream {
  if (stdout) return stdout;
  const dest = pino.destination({ sync: true, minLength: 4096, periodicFlush: LOG_FLUSH_MS });
  process.once('exit', () => {
    try {
      dest.flushSync();
    } catch {
      // stdout already closed: nothing to write to.
    }
  });
  stdout = dest;
  return dest;
}

const ID_SEGMENT = new RegExp(
  `^(${[ID_PREFIXES.shop, ID_PREFIXES.endpoint, ID_PREFIXES.event, ID_PREFIXES.intent].join('|')})_[0-9a-z]{26}$`,
);
const FIELD_OF_PREFIX: Record<string, string> = {
  [ID_PREFIXES.shop]: 'shop_id',
  [ID_PREFIXES.endpoint]: 'endpoint_id',
  [ID_PREFIXES.event]: 'event_id',
  [ID_PREFIXES.intent]: 'intent_id',
};

/** The shop, endpoint, event and intent ids named in a path (never anything else from it). */
export function idsInPath(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const seg of path.split('/')) {
    const m = ID_SEGMENT.exec(seg);
    if (m?.[1]) out[FIELD_OF_PREFIX[m[1]] as string] = seg;
  }
  return out;
}

/** The outcome word of an HTTP status: `ok`, `refused` (4xx) or `failed` (5xx). */
export function outcomeOf(status: number): 'ok' | 'refused' | 'failed' {
  return status >= 500 ? 'failed' : status >= 400 ? 'refused' : 'ok';
}
