// The error-code pages and their index, from the error catalog. Each page says who meets the
// code (the catalog's `answers`): the answer to a call the reader made, a state of an event
// (Shopify's or Flow's answer to a delivery), or Flowport's answer to a sender's webhook, and
// points MCP clients at the tools that serve what it asks them to read.
import { DOCS_PATHS, errorDocsPath } from '../../../api/src/docs-paths.ts';
import type { ErrorAnswers, ErrorCode, ErrorDef } from '../../../api/src/errors/catalog.ts';
import { AppError, toProblem } from '../../../api/src/errors/problem.ts';
import type { RecordedExchange } from '../../../api/src/http/openapi-examples.ts';
import { OPERATIONS } from '../../../api/src/operations/registry.ts';
import { errorAreaLabel } from './error-areas.ts';
import { code, table } from './markdown.ts';
import { requestBlock, responseBlock } from './recorded-examples.ts';

const RETRY_TEXT: Record<ErrorDef['retry'], string> = {
  no: 'Do not retry the same request; change something first.',
  sender: 'The sender should retry later (Flowport kept nothing it could process).',
  client: 'The API client may retry with backoff.',
  worker: 'Flowport retries this delivery itself.',
};

const EVENT_NOT_RETRIED = 'Not retried as a failed attempt; what happens to the event is below.';

const LAYER_TEXT: Record<string, string> = {
  capability: 'capability: this edition cannot do it',
  authority: 'authority: the grant or scope does not allow it',
  usage: 'usage: a plan limit or rate limit',
  target_state: 'target_state: the target is not in a state that allows it',
  safety: 'safety: a safety rule blocks it',
  product_boundary: 'product_boundary: outside what Flowport does',
};

/** How an operation is reached on each surface: its MCP tool and its HTTP route. */
function surfaces(operationId: string): { tool: string; http: string } {
  const op = OPERATIONS.find((o) => o.operationId === operationId);
  if (!op?.mcp) throw new Error(`No MCP tool for ${operationId}.`);
  return { tool: code(op.mcp.name), http: code(`${op.method.toUpperCase()} ${op.path}`) };
}

const answersOf = (def: ErrorDef): readonly ErrorAnswers[] => def.answers ?? ['call'];

/** One sentence per way the code is met. */
function answersText(def: ErrorDef): string {
  const event = surfaces('getEvent');
  const receipts = surfaces('listReceipts');
  const text: Record<ErrorAnswers, string> = {
    call: `The answer to a call you made: the HTTP response (\`${def.status}\`), an \`isError\` MCP tool result, a CLI error.${def.layer ? ' A refusal of that call.' : ''}`,
    event: `A state of an event, not the answer to an API call: Shopify's or Flow's answer to Flowport's delivery, recorded as the event's and its attempts' \`error_code\`. You meet it reading the event (${event.tool}, ${event.http}).`,
    sender: `Flowport's answer to a sender's webhook (HTTP \`${def.status}\` to the sender), recorded on its refused receipt. Your own calls are not refused with it; you meet it listing receipts (${receipts.tool}, ${receipts.http}).`,
  };
  return answersOf(def)
    .map((a) => text[a])
    .join(' Also: ');
}

/** What an agent does when it meets the code, by how it meets it. */
function agentSteps(def: ErrorDef): string[] {
  const answers = answersOf(def);
  if (answers.includes('call') && def.layer) {
    const manifest = surfaces('getManifest');
    const lookup = surfaces('getOpenApiOperation');
    return [
      'This is a refusal. Do not retry the same call unchanged. In order:',
      '',
      '1. Read this page (the `docs_url` in the error).',
      `2. Check the manifest for capabilities and boundaries: over MCP the ${manifest.tool} tool; over HTTP ${code(`GET ${DOCS_PATHS.manifestApi}`)}.`,
      `3. Look up the exact request shape: over MCP the ${lookup.tool} tool with the operation's id; over HTTP the [OpenAPI contract](${DOCS_PATHS.openapiJson}).`,
      '4. If the action is still outside your authority, ask a human.',
      '',
      'More in [refusals](/agent-access/refusals/).',
    ];
  }
  if (answers[0] === 'event') {
    const event = surfaces('getEvent');
    return [
      `Nothing refused your call: this is where an event's delivery stopped or waits. Read the event (${event.tool}): its \`handoff\` says what it waits for and its attempts say what Shopify answered. Then follow "How to fix it" above; a human may need to act in Shopify.`,
    ];
  }
  if (answers[0] === 'sender') {
    const receipts = surfaces('listReceipts');
    return [
      `Nothing refused your call: a sender's webhook was refused. List the refused receipts (${receipts.tool} with \`result=refused\`), read their failure detail, and tell a human what the sender must change; only the sender can send the event again.`,
    ];
  }
  return [];
}

export function renderErrorPage(
  codeName: string,
  def: ErrorDef,
  origin: string,
  /** A recorded exchange the product answered with this code (openapi/examples/), when there is one. */
  recorded?: RecordedExchange,
): string {
  const answers = answersOf(def);
  const eventOnly = !answers.includes('call') && !answers.includes('sender');
  // The example is what the product answers (toProblem), with per-request values as placeholders.
  const problem = toProblem(new AppError(codeName as ErrorCode, { detail: '<DETAIL>', reason: '<REASON>' }), {
    publicUrl: origin,
    requestId: '<REQUEST_ID>',
    instance: '<REQUEST_PATH>',
  });
  const parts = [
    table(
      ['Fact', 'Value'],
      [
        ['Code', code(codeName)],
        ['Met as', answersText(def)],
        ['HTTP status', eventOnly ? 'none: a state of an event, not an HTTP answer' : code(String(def.status))],
        [
          'Refusal layer',
          def.layer && !eventOnly ? (LAYER_TEXT[def.layer] ?? def.layer) : 'not a refusal of a request',
        ],
        ['Retry', eventOnly && def.retry === 'no' ? EVENT_NOT_RETRIED : RETRY_TEXT[def.retry]],
        ['Area', def.area],
      ],
    ),
    '',
    '## What happened',
    '',
    def.description,
    '',
    '## How to fix it',
    '',
    def.fix,
  ];
  const steps = agentSteps(def);
  if (steps.length) parts.push('', '## If you are an agent', '', ...steps);
  if (recorded) {
    parts.push(
      '',
      '## Example response',
      '',
      `Recorded from Flowport in sandbox mode (\`npm run docs:record\`): ${recorded.summary.replace(/^Refused: /, '').replace(/^./, (ch) => ch.toLowerCase())}. Ids, tokens and hosts are placeholders.`,
      '',
      requestBlock(recorded),
      '',
      responseBlock(recorded, 'the [API reference](/reference/api/)'),
    );
    return parts.join('\n');
  }
  // An event state is no response body: the event carries the code (its `error_code`).
  if (eventOnly) return parts.join('\n');
  parts.push(
    '',
    '## Example response',
    '',
    answers[0] === 'sender'
      ? 'What the sender receives. Fields in angle brackets vary per request.'
      : 'Fields in angle brackets vary per request.',
    '',
    '```json',
    JSON.stringify(problem, null, 2),
    '```',
  );
  return parts.join('\n');
}

/** The page's one-line summary (its meta description): an event state has no HTTP status. */
export function errorPageSummary(def: ErrorDef): string {
  return indexStatus(def) === 'event' ? `${def.title} (a state of an event).` : `${def.title} (HTTP ${def.status}).`;
}

/** Status column of the index: an event state has none. */
function indexStatus(def: ErrorDef): string | number {
  const answers = answersOf(def);
  return answers.includes('call') || answers.includes('sender') ? def.status : 'event';
}

export function renderErrorIndex(catalog: Record<string, ErrorDef>): string {
  const codes = Object.keys(catalog).sort();
  const areas = [...new Set(codes.map((c) => (catalog[c] as ErrorDef).area))].sort();
  const parts = [
    "Every error Flowport returns has a stable `code`, an HTTP status and a page here. API and MCP errors are RFC 9457 `application/problem+json` bodies whose `type` and `docs_url` point at the page for their code; refusals also carry a `refusal` object (see [refusals](/agent-access/refusals/)). Delivery codes (status `event`) are states of an event, recorded as its `error_code`: Shopify's or Flow's answer to a delivery, never the answer to an API call. Intake codes are Flowport's answers to senders, recorded on refused receipts.",
    '',
    `There are ${codes.length} codes.`,
  ];
  for (const area of areas) {
    parts.push('', `## ${errorAreaLabel(area)}`, '');
    parts.push(
      table(
        ['Code', 'Status', 'Title', 'Refusal layer'],
        codes
          .filter((c) => (catalog[c] as ErrorDef).area === area)
          .map((c) => {
            const d = catalog[c] as ErrorDef;
            const refusal = d.layer && indexStatus(d) !== 'event' ? code(d.layer) : '—';
            return [`[${code(c)}](${errorDocsPath(c)})`, indexStatus(d), d.title, refusal];
          }),
      ),
    );
  }
  return parts.join('\n');
}
