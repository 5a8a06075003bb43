// The recorded examples (openapi/examples/, written by `npm run docs:record`, ADR 0009) and how
// they enter the OpenAPI document: each operation's request body gets the body a recorded
// success sent as its `example` (what Scalar's Test Request pre-fills), and each response status
// gets the recorded answers as named `examples`. Nothing here is written by hand.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const RECORDINGS_DIR = join(import.meta.dirname, '..', '..', '..', 'openapi', 'examples');

export interface RecordedExchange {
  /** Stable name within its file (`previewed`, `missing_scope`, …). */
  name: string;
  summary: string;
  request: { method: string; path: string; headers: Record<string, string>; body?: unknown };
  response: { status: number; body: unknown };
}

/** Exchanges by file: an operationId, or `intake` for sender intake. */
export type Recordings = Record<string, RecordedExchange[]>;

/** The committed recordings ({} when there are none yet). */
export function readRecordings(dir: string = RECORDINGS_DIR): Recordings {
  if (!existsSync(dir)) return {};
  const out: Recordings = {};
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.json')) continue;
    out[file.replace(/\.json$/, '')] = JSON.parse(readFileSync(join(dir, file), 'utf8')) as RecordedExchange[];
  }
  return out;
}

/** The text of each recordings file (stable: 2-space JSON and a newline), by file name. */
export function recordingsText(recordings: Recordings): Record<string, string> {
  return Object.fromEntries(
    Object.keys(recordings)
      .sort()
      .map((k) => [`${k}.json`, `${JSON.stringify(recordings[k], null, 2)}\n`]),
  );
}

/**
 * The first recorded exchange of an operation that succeeded (2xx) without a safety
 * acknowledgement in its body (`acknowledge_…`): the request a user would send unprompted.
 */
export function recordedSuccess(recordings: Recordings, operationId: string): RecordedExchange | undefined {
  return recordings[operationId]?.find(
    (e) =>
      e.response.status >= 200 &&
      e.response.status < 300 &&
      !Object.keys(isObject(e.request.body) ? e.request.body : {}).some((k) => k.startsWith('acknowledge_')),
  );
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each path and query parameter the recorded request sent gets that value as its `example`. */
function setParameterExamples(template: string, parameters: unknown[], e: RecordedExchange): void {
  const url = new URL(e.request.path, 'http://recorded.invalid');
  const names: string[] = [];
  const pattern = new RegExp(
    `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    })}$`,
  );
  const match = pattern.exec(url.pathname);
  const values: Record<string, Record<string, string>> = { path: {}, query: Object.fromEntries(url.searchParams) };
  names.forEach((name, i) => {
    const v = match?.[i + 1];
    if (v !== undefined) (values.path as Record<string, string>)[name] = decodeURIComponent(v);
  });
  for (const p of parameters) {
    if (!isObject(p) || typeof p.name !== 'string' || typeof p.in !== 'string') continue;
    const v = values[p.in]?.[p.name];
    if (v === undefined) continue;
    const schema = isObject(p.schema) ? p.schema : {};
    p.example = schema.type === 'integer' || schema.type === 'number' ? Number(v) : v;
  }
}

/** Puts the recordings into the document (in place): request `example`, response `examples`. */
export function applyRecordedExamples<T extends object>(doc: T, recordings: Recordings): T {
  const paths = (doc as unknown as Json).paths;
  for (const [path, item] of Object.entries(isObject(paths) ? paths : {})) {
    for (const op of Object.values(isObject(item) ? item : {})) {
      if (!isObject(op) || typeof op.operationId !== 'string') continue;
      const exchanges = recordings[op.operationId] ?? [];
      if (exchanges.length === 0) continue;
      const success = recordedSuccess(recordings, op.operationId);
      if (success && Array.isArray(op.parameters)) setParameterExamples(path, op.parameters, success);
      const body = isObject(op.requestBody) && isObject(op.requestBody.content) ? op.requestBody.content : null;
      const json = body?.['application/json'];
      if (isObject(json) && success?.request.body !== undefined) json.example = success.request.body;
      const responses = isObject(op.responses) ? op.responses : {};
      for (const [status, response] of Object.entries(responses)) {
        if (!isObject(response) || !isObject(response.content)) continue;
        // The example a user would send first (Scalar shows the first one), then the others.
        const matching = exchanges
          .filter((e) => String(e.response.status) === status)
          .sort((a, b) => Number(b === success) - Number(a === success));
        if (matching.length === 0) continue;
        for (const media of Object.values(response.content)) {
          if (!isObject(media)) continue;
          media.examples = Object.fromEntries(
            matching.map((e) => [e.name, { summary: e.summary, value: e.response.body }]),
          );
        }
      }
    }
  }
  return doc;
}
