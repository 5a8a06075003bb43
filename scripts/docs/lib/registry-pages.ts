// Renders the reference pages derived from the operation registry and the
// other single sources: MCP tools, CLI commands, the manifest, error codes,
// tiers and scopes, plans.
import { z } from 'zod';
import { ALL_SCOPES, SCOPE_DESCRIPTIONS, TIER_DESCRIPTIONS, TIER_SCOPES, TIERS } from '../../../api/src/auth/scopes.ts';
import { DOCS_PATHS, errorDocsPath } from '../../../api/src/docs-paths.ts';
import type { ErrorDef } from '../../../api/src/errors/catalog.ts';
import { MCP_PATH } from '../../../api/src/lib/package-info.ts';
import type { AnyOperation } from '../../../api/src/operations/types.ts';
import type { Plan } from '../../../api/src/plans.ts';
import { flattenFields, type JsonSchema, refResolver } from './json-schema.ts';
import { code, table } from './markdown.ts';

export interface CliOption {
  flag: string;
  description: string;
  required?: boolean;
}

export interface OperatorCommand {
  command: readonly string[];
  summary: string;
  options: readonly CliOption[];
}

const FAMILY_LABELS: Record<string, string> = {
  docs: 'Docs and manifest',
  events: 'Event investigation',
  recovery: 'Recovery previews and actions',
  setup: 'Setup and endpoints',
  account: 'Plan, grant and audit',
};

function familyLabel(family: string): string {
  return FAMILY_LABELS[family] ?? family;
}

function toJsonSchema(schema: unknown): JsonSchema | undefined {
  if (!schema) return undefined;
  try {
    return z.toJSONSchema(schema as z.ZodType, { unrepresentable: 'any', io: 'input' }) as JsonSchema;
  } catch {
    return undefined;
  }
}

/** The tool/command input: params, query and body merged into one object, as MCP and the CLI take it. */
export function operationInputSchema(op: AnyOperation): JsonSchema {
  const merged: JsonSchema = { type: 'object', properties: {}, required: [] };
  for (const part of [op.request.params, op.request.query, op.request.body]) {
    const s = toJsonSchema(part);
    if (!s) continue;
    Object.assign(merged.properties as object, s.properties ?? {});
    merged.required?.push(...(s.required ?? []));
  }
  return merged;
}

export function operationOutputSchema(op: AnyOperation): JsonSchema | undefined {
  const s = toJsonSchema(op.response);
  return s ? ({ ...s, $schema: undefined } as JsonSchema) : undefined;
}

function fields(schema: JsonSchema | undefined, empty: string): string {
  const rows = flattenFields(schema, refResolver(schema ?? {}));
  if (rows.length === 0) return empty;
  return table(
    ['Field', 'Type', 'Required', 'Description'],
    rows.map((r) => [code(r.name), r.type, r.required ? 'yes' : 'no', r.description]),
  );
}

/** MCP annotations derived from the operation's kind (never typed twice). */
export function mcpAnnotations(op: AnyOperation): Record<string, boolean> {
  if (op.kind === 'read') return { readOnlyHint: true, destructiveHint: false, openWorldHint: op.openWorld ?? false };
  if (op.kind === 'preview')
    return { readOnlyHint: false, destructiveHint: false, openWorldHint: op.openWorld ?? false };
  return { readOnlyHint: false, destructiveHint: op.destructive ?? false, openWorldHint: op.openWorld ?? false };
}

export function renderMcpReference(ops: readonly AnyOperation[], origin: string): string {
  const tools = ops.filter((op) => op.mcp !== null);
  const url = `${origin}${MCP_PATH}`;
  const parts: string[] = [
    `Flowport's MCP endpoint is a second surface over the same contract as the [Agent Operations API](/reference/api/): the same grants and scopes, the same refusals with docs links, the same action intents and audit log. Each tool below is one API operation; its scope, inputs and outputs are the operation's.`,
    '',
    '## Connect',
    '',
    table(
      ['Setting', 'Value'],
      [
        ['URL', code(url)],
        ['Transport', 'Streamable HTTP'],
        ['Auth header', code('Authorization: Bearer <GRANT_TOKEN>')],
        ['Manifest (read first)', code(`${origin}${DOCS_PATHS.manifestApi}`)],
      ],
    ),
    '',
    "Replace `<GRANT_TOKEN>` with the grant token a human created for you with `flowport grants create`; see [grants and scopes](/agent-access/grants-and-scopes/). Never paste a real token into shared files. The URL above uses this docs site's origin; if your Flowport runs elsewhere, use the `mcp.url` from its manifest.",
    '',
    'A client configuration file (the `mcpServers` shape most desktop and IDE clients read):',
    '',
    '```json',
    JSON.stringify(
      { mcpServers: { flowport: { type: 'http', url, headers: { Authorization: 'Bearer <GRANT_TOKEN>' } } } },
      null,
      2,
    ),
    '```',
    '',
    'A client that starts local commands only can bridge through `mcp-remote`:',
    '',
    '```json',
    JSON.stringify(
      {
        mcpServers: {
          flowport: {
            command: 'npx',
            args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${AUTH_HEADER}'],
            env: { AUTH_HEADER: 'Bearer <GRANT_TOKEN>' },
          },
        },
      },
      null,
      2,
    ),
    '```',
    '',
    'More in [MCP setup](/agent-access/mcp-setup/).',
    '',
    '## Tools',
    '',
    table(
      ['Tool', 'Family', 'Scope', 'Read-only'],
      tools.map((op) => [
        code(op.mcp?.name as string),
        familyLabel(op.family),
        op.scope ? code(op.scope) : 'public',
        op.kind === 'read' ? 'yes' : 'no',
      ]),
    ),
    '',
    'Annotations come from the operation kind: reads are `readOnlyHint: true`; previews change nothing but record an intent (`readOnlyHint: false`, `destructiveHint: false`); executions set `destructiveHint` when they destroy data. A refused call returns an `isError: true` result carrying the same refusal object as the API (layer, reason, next steps with the docs URL).',
  ];

  const families = [...new Set(tools.map((t) => t.family))];
  for (const family of families) {
    parts.push('', `## ${familyLabel(family)}`);
    for (const op of tools.filter((t) => t.family === family)) {
      const mcp = op.mcp as NonNullable<AnyOperation['mcp']>;
      parts.push('', `### ${mcp.name}`, '', `**${mcp.title}.** ${mcp.description}`, '');
      const ann = mcpAnnotations(op);
      parts.push(
        table(
          ['Fact', 'Value'],
          [
            [
              'Scope',
              op.scope
                ? `${code(op.scope)} ([grants and scopes](/agent-access/grants-and-scopes/))`
                : 'public (no grant needed)',
            ],
            ['Kind', op.kind],
            ['Same as', `${code(`${op.method.toUpperCase()} ${op.path}`)} (${code(op.operationId)})`],
            [
              'Annotations',
              Object.entries(ann)
                .map(([k, v]) => code(`${k}: ${v}`))
                .join(', '),
            ],
          ],
        ),
      );
      parts.push('', '#### Input', '', fields(operationInputSchema(op), 'No input.'));
      parts.push('', '#### Output', '', fields(operationOutputSchema(op), 'See the OpenAPI contract.'));
    }
  }
  return parts.join('\n');
}

export interface CliSources {
  operator: readonly OperatorCommand[];
  commonOperatorOptions: readonly CliOption[];
  commonApiOptions: readonly CliOption[];
  /** The CLI's own derivation of an operation's flags (so the page can never disagree with the parser). */
  apiOptions: (op: AnyOperation) => readonly CliOption[];
  env: { url: string; token: string };
}

function optionTable(options: readonly CliOption[]): string {
  if (options.length === 0) return 'No options.';
  return table(
    ['Option', 'Required', 'Description'],
    options.map((o) => [code(o.flag), o.required ? 'yes' : 'no', o.description]),
  );
}

export function renderCliReference(ops: readonly AnyOperation[], cli: CliSources): string {
  const cliOps = ops.filter((op) => op.cli !== null);
  const parts: string[] = [
    'The `flowport` command line tool (run it with `npx flowport` in a checkout) has two kinds of commands:',
    '',
    `- **API commands**, one per [API operation](/reference/api/). They call a running Flowport over HTTP with a grant token, exactly like the API, and print the JSON response. Set \`${cli.env.url}\` and \`${cli.env.token}\` in the environment (or pass the options below) so the token stays out of your shell history.`,
    '- **Operator commands**, which a human runs on the machine that hosts Flowport, against its local store: creating and revoking grants, for example. No agent can reach them through the API or MCP.',
    '',
    'Add `--help` after any command for its options. See [the CLI guide](/agent-access/cli/) for a walkthrough.',
    '',
    '## API commands',
    '',
  ];
  if (cliOps.length === 0) parts.push('None yet.');
  else
    parts.push(
      table(
        ['Command', 'Operation', 'Scope'],
        cliOps.map((op) => [
          code(`flowport ${op.cli?.join(' ')}`),
          `${op.summary} (${code(`${op.method.toUpperCase()} ${op.path}`)})`,
          op.scope ? code(op.scope) : 'public',
        ]),
      ),
    );
  parts.push('', 'Every API command also accepts:', '', optionTable(cli.commonApiOptions));
  for (const op of cliOps) {
    parts.push('', `### flowport ${op.cli?.join(' ')}`, '', op.description, '');
    parts.push(
      `Same operation as ${code(`${op.method.toUpperCase()} ${op.path}`)} ([API reference](/reference/api/)). Scope: ${op.scope ? code(op.scope) : 'public (no grant needed)'}.`,
      '',
    );
    parts.push(optionTable(cli.apiOptions(op)));
  }
  parts.push('', '## Operator commands', '');
  if (cli.operator.length === 0) parts.push('None yet.');
  else
    parts.push(
      table(
        ['Command', 'What it does'],
        cli.operator.map((c) => [code(`flowport ${c.command.join(' ')}`), c.summary]),
      ),
    );
  parts.push('', 'Every operator command also accepts:', '', optionTable(cli.commonOperatorOptions));
  for (const c of cli.operator) {
    parts.push('', `### flowport ${c.command.join(' ')}`, '', c.summary, '', optionTable(c.options));
  }
  return parts.join('\n');
}

const RETRY_TEXT: Record<ErrorDef['retry'], string> = {
  no: 'Do not retry the same request; change something first.',
  sender: 'The sender should retry later (Flowport kept nothing it could process).',
  client: 'The API client may retry with backoff.',
  worker: 'Flowport retries this delivery itself.',
};

const LAYER_TEXT: Record<string, string> = {
  capability: 'capability: this edition cannot do it',
  authority: 'authority: the grant or scope does not allow it',
  usage: 'usage: a plan limit or rate limit',
  target_state: 'target_state: the target is not in a state that allows it',
  safety: 'safety: a safety rule blocks it',
  product_boundary: 'product_boundary: outside what Flowport does',
};

export function renderErrorPage(codeName: string, def: ErrorDef, origin: string): string {
  const docsUrl = `${origin}${errorDocsPath(codeName)}`;
  const problem: Record<string, unknown> = {
    type: docsUrl,
    title: def.title,
    status: def.status,
    detail: '<DETAIL>',
    code: codeName,
    docs_url: docsUrl,
    request_id: '<REQUEST_ID>',
  };
  if (def.layer) {
    problem.refusal = {
      layer: def.layer,
      reason: '<REASON>',
      next_steps: [
        { kind: 'docs', url: docsUrl },
        { kind: 'manifest', url: `${origin}${DOCS_PATHS.manifestApi}` },
        { kind: 'openapi', url: `${origin}${DOCS_PATHS.openapiJson}` },
        { kind: 'ask_human' },
      ],
    };
  }
  const parts = [
    table(
      ['Fact', 'Value'],
      [
        ['Code', code(codeName)],
        ['HTTP status', code(String(def.status))],
        ['Refusal layer', def.layer ? (LAYER_TEXT[def.layer] ?? def.layer) : 'not a refusal'],
        ['Retry', RETRY_TEXT[def.retry]],
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
  if (def.layer) {
    parts.push(
      '',
      '## If you are an agent',
      '',
      'This is a refusal. Do not retry the same call unchanged. In order:',
      '',
      '1. Read this page (the `docs_url` in the error).',
      `2. Check the manifest at \`${DOCS_PATHS.manifestApi}\` for capabilities and boundaries.`,
      `3. Inspect the [OpenAPI contract](${DOCS_PATHS.openapiJson}) for the exact request shape.`,
      '4. If the action is still outside your authority, ask a human.',
      '',
      'More in [refusals](/agent-access/refusals/).',
    );
  }
  parts.push(
    '',
    '## Example response',
    '',
    'Fields in angle brackets vary per request.',
    '',
    '```json',
    JSON.stringify(problem, null, 2),
    '```',
  );
  return parts.join('\n');
}

export function renderErrorIndex(catalog: Record<string, ErrorDef>): string {
  const codes = Object.keys(catalog).sort();
  const areas = [...new Set(codes.map((c) => (catalog[c] as ErrorDef).area))].sort();
  const parts = [
    'Every error Flowport returns has a stable `code`, an HTTP status and a page here. API and MCP errors are RFC 9457 `application/problem+json` bodies whose `type` and `docs_url` point at the page for their code; refusals also carry a `refusal` object (see [refusals](/agent-access/refusals/)).',
    '',
    `There are ${codes.length} codes.`,
  ];
  for (const area of areas) {
    parts.push('', `## ${area[0]?.toUpperCase()}${area.slice(1)}`, '');
    parts.push(
      table(
        ['Code', 'Status', 'Title', 'Refusal layer'],
        codes
          .filter((c) => (catalog[c] as ErrorDef).area === area)
          .map((c) => {
            const d = catalog[c] as ErrorDef;
            return [`[${code(c)}](${errorDocsPath(c)})`, d.status, d.title, d.layer ? code(d.layer) : '—'];
          }),
      ),
    );
  }
  return parts.join('\n');
}

/** Tier × scope matrix plus every scope's meaning. Used on its own page and inside guides. */
export function renderTierTable(): string {
  const tierHeader = TIERS.map((t) => code(t));
  return [
    table(
      ['Tier', 'What it is for'],
      TIERS.map((t) => [code(t), TIER_DESCRIPTIONS[t]]),
    ),
    '',
    'Which scopes each tier expands to ("yes" = included):',
    '',
    table(
      ['Scope', ...tierHeader, 'Allows'],
      ALL_SCOPES.map((s) => [
        code(s),
        ...TIERS.map((t) => (TIER_SCOPES[t].includes(s) ? 'yes' : 'no')),
        SCOPE_DESCRIPTIONS[s],
      ]),
    ),
  ].join('\n');
}

function n(value: number): string {
  return value.toLocaleString('en-US');
}

export function renderPlanTable(plans: readonly Plan[]): string {
  const row = (label: string, f: (p: Plan) => string) => [label, ...plans.map(f)];
  return table(
    ['Per month', ...plans.map((p) => p.name)],
    [
      row('Price (USD)', (p) => (p.priceUsdMonthly === 0 ? 'free' : `$${p.priceUsdMonthly}`)),
      row('Accepted events', (p) => n(p.monthly.acceptedEvents)),
      row('Grace past the event cap', (p) => (p.graceEvents === 0 ? 'none' : n(p.graceEvents))),
      row('Replays', (p) => n(p.monthly.replays)),
      row('Diagnostics shares', (p) => n(p.monthly.diagnosticsShares)),
      row('Agent reads (simple)', (p) => n(p.monthly.simpleReads)),
      row('Agent reads (rich)', (p) => n(p.monthly.richReads)),
      row('Previews', (p) => n(p.monthly.previews)),
      row('Executions', (p) => n(p.monthly.executions)),
      row('Body retention', (p) => `${p.bodyRetentionDays} days`),
      row('Dedupe window', (p) => `${p.dedupeWindowHours} hours`),
      row('Requests per minute per grant', (p) => n(p.ratePerMinute.perGrant)),
      row('Requests per minute per shop', (p) => n(p.ratePerMinute.perShop)),
    ],
  );
}

export function renderManifestReference(
  op: AnyOperation,
  boundaries: readonly string[],
  onRefusal: readonly string[],
  origin: string,
): string {
  return [
    `The manifest is the public front door for agents: ${code(`GET ${op.path}`)}, no grant needed. Read it before any authenticated call. It names this edition, every capability (one per operation, with its scope, MCP tool and CLI command), the scopes and tiers, the safety boundaries, and where the docs and the OpenAPI contract live.`,
    '',
    '```sh',
    `curl -s ${origin}${op.path}`,
    '```',
    '',
    '## Safety boundaries',
    '',
    'The manifest states these boundaries, and Flowport enforces them:',
    '',
    ...boundaries.map((b) => `- ${b}`),
    '',
    '## On refusal',
    '',
    'The manifest tells clients what to do when refused, in this order:',
    '',
    ...onRefusal.map((s, i) => `${i + 1}. ${s}`),
    '',
    '## Fields',
    '',
    fields(operationOutputSchema(op), 'See the OpenAPI contract.'),
    '',
    `Exact shape: the \`Manifest\` schema in the [OpenAPI contract](${DOCS_PATHS.openapiJson}).`,
  ].join('\n');
}
