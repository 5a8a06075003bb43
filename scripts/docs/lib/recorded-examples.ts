// Example requests and answers on docs pages, taken from the recordings (openapi/examples/,
// ADR 0009) rather than written by hand: the API reference pages, the error-code pages and the
// `<!-- generated:recorded:FILE/NAME -->` directive of hand-written pages.
import type { RecordedExchange, Recordings } from '../../../api/src/http/openapi-examples.ts';
import { code } from './markdown.ts';

/** Above this, an answer is shown with long arrays cut short, so a page stays readable whole (30 KB twins). */
const MAX_SHOWN_BYTES = 6_000;

function shorten(v: unknown, keep: number): unknown {
  if (Array.isArray(v)) return v.slice(0, keep).map((x) => shorten(x, keep));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shorten(x, keep)]));
  return v;
}

/** The JSON of a recorded body, pretty-printed; a large one has its arrays cut to fewer items, and says so. */
export function shownJson(body: unknown): { json: string; note: string | null } {
  const full = JSON.stringify(body, null, 2);
  if (full.length <= MAX_SHOWN_BYTES) return { json: full, note: null };
  for (const keep of [3, 2, 1]) {
    const json = JSON.stringify(shorten(body, keep), null, 2);
    if (json.length <= MAX_SHOWN_BYTES)
      return { json, note: `Lists are cut to their first ${keep === 1 ? 'item' : `${keep} items`} here.` };
  }
  return { json: '', note: null };
}

/** The request line, headers and body as an `http` block. */
export function requestBlock(e: RecordedExchange): string {
  const lines = [
    `${e.request.method} ${e.request.path}`,
    ...Object.entries(e.request.headers).map(([k, v]) => `${k}: ${v}`),
  ];
  if (e.request.body !== undefined) lines.push('', JSON.stringify(e.request.body, null, 2));
  return ['```http', ...lines, '```'].join('\n');
}

/** The answer's status and body as a `json` block (or a pointer when it is too large to show). */
export function responseBlock(e: RecordedExchange, fullAt: string): string {
  const { json, note } = shownJson(e.response.body);
  const head = `Answer ${code(String(e.response.status))}${note ? ` (${note} The whole answer: ${fullAt}.)` : ':'}`;
  if (!json) return `Answer ${code(String(e.response.status))}: too large to show here; see ${fullAt}.`;
  return [head, '', '```json', json, '```'].join('\n');
}

/** Where a file's recordings are kept, for pointers from pages. */
export function recordingSource(file: string): string {
  return `\`openapi/examples/${file}.json\``;
}

/** An operation's recorded exchanges for its reference page: successes first, then refusals. */
export function renderOperationExamples(recordings: Recordings, operationId: string, interactive: string): string {
  const exchanges = recordings[operationId] ?? [];
  if (exchanges.length === 0) return '';
  const fullAt = `the [interactive reference](${interactive})`;
  const parts = [
    '## Examples',
    '',
    `Recorded from Flowport in sandbox mode (\`npm run docs:record\`, kept in ${recordingSource(operationId)}): real requests and answers, with ids, tokens, secrets and hosts replaced by placeholders.`,
  ];
  // One success (an operation such as the confirmation has one per intent kind; the task pages
  // show the others), then every recorded refusal.
  const ordered = [
    ...exchanges.filter((e) => e.response.status < 300).slice(0, 1),
    ...exchanges.filter((e) => e.response.status >= 300),
  ];
  for (const e of ordered) parts.push('', `### ${e.summary}`, '', requestBlock(e), '', responseBlock(e, fullAt));
  return parts.join('\n');
}

/** A recorded exchange by `file/name`, for the content directive. */
export function findExchange(recordings: Recordings, ref: string): RecordedExchange {
  const [file, name] = ref.split('/');
  const found = recordings[file ?? '']?.find((e) => e.name === name);
  if (!found)
    throw new Error(
      `No recording ${ref} in openapi/examples/ (known in ${file}: ${(recordings[file ?? ''] ?? []).map((e) => e.name).join(', ') || 'none'}). Add it to the scenarios in scripts/docs/lib/recordings.ts and run \`npm run docs:record\`.`,
    );
  return found;
}

/** `body` cut to the dotted `keys` (`id`, `result.endpoint_id`), in their order; all of it without keys. */
export function pickKeys(body: unknown, keys: readonly string[]): unknown {
  if (keys.length === 0) return body;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const path = key.split('.');
    let from: unknown = body;
    let to = out;
    path.forEach((part, i) => {
      const value = from && typeof from === 'object' ? (from as Record<string, unknown>)[part] : undefined;
      if (value === undefined) throw new Error(`The recorded answer has no ${key}.`);
      if (i === path.length - 1) to[part] = value;
      else {
        to[part] = (to[part] as Record<string, unknown> | undefined) ?? {};
        to = to[part] as Record<string, unknown>;
        from = value;
      }
    });
  }
  return out;
}

/** A content directive's answer: `recorded-answer:FILE/NAME [key,key.sub]`. */
export interface AnswerDirective {
  ref: string;
  keys: string[];
}

/** The directive syntax, shared by the docs generator and the runnable-docs test. */
export const RECORDED_DIRECTIVE =
  /<!--\s*generated:(recorded|recorded-answer):([A-Za-z0-9_/-]+)(?:\s+([A-Za-z0-9_.,]+))?\s*-->/g;

/** The JSON a `recorded-answer` directive shows: the recorded answer, cut to its keys. */
export function directiveAnswer(recordings: Recordings, d: AnswerDirective): unknown {
  return pickKeys(findExchange(recordings, d.ref).response.body, d.keys);
}

/** The Markdown a recorded directive expands to. */
export function renderDirective(recordings: Recordings, kind: string, ref: string, keys: string[]): string {
  const e = findExchange(recordings, ref);
  if (kind === 'recorded') return `${requestBlock(e)}\n\n${responseBlock(e, 'the [API reference](/reference/api/)')}`;
  if (keys.length === 0) return ['```json', shownJson(e.response.body).json, '```'].join('\n');
  // A few keys fit on one line, as the pages show short answers.
  const picked = pickKeys(e.response.body, keys);
  const oneLine = JSON.stringify(picked, null, 1).replace(/\n\s*/g, ' ');
  const json = oneLine.length <= 120 ? oneLine : JSON.stringify(picked, null, 2);
  return ['```json', json, '```'].join('\n');
}
