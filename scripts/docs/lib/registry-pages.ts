// Renders the reference pages derived from the operation registry and the
// other single sources: MCP tools, CLI commands, the manifest, error codes,
// tiers and scopes, plans.
import { z } from 'zod';
import { ALL_SCOPES, SCOPE_DESCRIPTIONS, TIER_DESCRIPTIONS, TIER_SCOPES, TIERS } from '../../../api/src/auth/scopes.ts';
import { DOCS_PATHS } from '../../../api/src/docs-paths.ts';
import { MCP_PATH } from '../../../api/src/lib/package-info.ts';
import { agentCommandLine, CLI_INVOCATION, commandLine } from '../../../api/src/lib/command-line.ts';
import { ASK_FOR_A_GRANT } from '../../../api/src/entry-points.ts';
import type { AnyOperation } from '../../../api/src/core/types.ts';
import type { Plan } from '../../../api/src/plans.ts';
import {
  COMMON_OPERATOR_OPTIONS,
  type CommandOption,
  CONNECTION_OPTIONS,
  DEFAULT_BASE_URL_RULE,
  GLOBAL_OPTIONS,
} from '../../../api/src/cli/definitions.ts';
import { EXIT_CODES, type ExitCodeDef } from '../../../api/src/cli/exit-codes.ts';
import { type CliCommand, cliCommands, usageLine } from '../../../api/src/cli/main.ts';
import { CLI_ENV } from '../../../api/src/config.ts';
import { familyLabel } from '../../../api/src/operations/families.ts';
import { renamedTools } from '../../../api/src/operations/naming.ts';
import { mcpToolDefinitions } from '../../../api/src/mcp/tools.ts';
import { operationPagePath } from './api-reference.ts';
import { flattenFields, type JsonSchema, refResolver } from './json-schema.ts';
import { code, table } from './markdown.ts';

function toJsonSchema(schema: unknown): JsonSchema | undefined {
  if (!schema) return undefined;
  try {
    return z.toJSONSchema(schema as z.ZodType, { unrepresentable: 'any', io: 'input' }) as JsonSchema;
  } catch {
    return undefined;
  }
}

export function operationOutputSchema(op: AnyOperation): JsonSchema | undefined {
  const s = toJsonSchema(op.response);
  return s ? ({ ...s, $schema: undefined } as JsonSchema) : undefined;
}

function fields(schema: JsonSchema | undefined, empty: string, maxDepth?: number): string {
  const rows = flattenFields(schema, refResolver(schema ?? {}), maxDepth);
  if (rows.length === 0) return empty;
  return table(
    ['Field', 'Type', 'Required', 'Description'],
    rows.map((r) => [code(r.name), r.type, r.required ? 'yes' : 'no', r.description]),
  );
}

/** The MCP tool families (operation families with at least one tool), in registry order. */
export function mcpFamilies(ops: readonly AnyOperation[]): string[] {
  return [...new Set(ops.filter((op) => op.mcp !== null).map((op) => op.family))];
}

/** `/reference/mcp/<family>/`: the tools of one family. */
export function mcpFamilyPath(family: string): string {
  return `/reference/mcp/${family}/`;
}

/** /reference/mcp/: how to connect, then every tool, each linking its family's page. */
export function renderMcpIndex(ops: readonly AnyOperation[], origin: string): string {
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
        [
          'Auth',
          `OAuth (discovered from the 401; the merchant approves on a consent page), or ${code('Authorization: Bearer <GRANT_TOKEN>')}`,
        ],
        ['Manifest (read first)', code(`${origin}${DOCS_PATHS.manifestApi}`)],
      ],
    ),
    '',
    'Clients with MCP OAuth support need only the URL: see [MCP setup](/agent-access/mcp-setup/) and the [OAuth endpoints](/reference/oauth/).',
    '',
    `Replace \`<GRANT_TOKEN>\` with a grant token: ${ASK_FOR_A_GRANT.charAt(0).toLowerCase()}${ASK_FOR_A_GRANT.slice(1)}; see [grants and scopes](/agent-access/grants-and-scopes/). Never paste a real token into shared files. The URL above uses this docs site's origin; if your Flowport runs elsewhere, use the \`mcp.url\` from its manifest.`,
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
            // biome-ignore lint/suspicious/noTemplateCurlyInString: mcp-remote expands ${AUTH_HEADER} from env itself.
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
        `[${code(op.mcp?.name as string)}](${mcpFamilyPath(op.family)}#${op.mcp?.name})`,
        `[${familyLabel(op.family)}](${mcpFamilyPath(op.family)})`,
        op.scope ? code(op.scope) : 'no scope',
        op.kind === 'read' ? 'yes' : 'no',
      ]),
    ),
    '',
    'Annotations come from the operation kind: reads are `readOnlyHint: true` and `idempotentHint: true`; previews change nothing but record an intent (`readOnlyHint: false`, `destructiveHint: false`, `idempotentHint: false`); executions set `destructiveHint` when they destroy data and `idempotentHint` when a repeat has no further effect (a confirmation with the same `idempotency_key`, a cancellation). `openWorldHint` is true only where a call can reach Shopify Flow (a confirmation). Every tool needs the grant token that opens the MCP endpoint; tools with no scope need no more. A refused call returns an `isError: true` result carrying the same refusal object as the API (layer, reason, next steps with the docs URL).',
    '',
    '## Inputs, outputs and old names',
    '',
    `\`tools/list\` is kept small enough for an agent's context. Each tool lists its inputs in full, each described as the same parameter of its API operation (\`idempotency_key\` is required, as the \`Idempotency-Key\` header is). Its result is the operation's response as \`structuredContent\` (and a text copy); the output shape is not repeated in \`tools/list\`: it is the resource at the tool's \`_meta["flowport/output_schema"]\`, the public ${code('GET /agent/v1/openapi/operations/{operation_id}')} lookup of the operation, also what ${code('get_open_api_operation')} returns. The other resources are every docs page as Markdown, \`llms.txt\` and the OpenAPI contract.`,
    '',
    `A tool called by a name it had before the one-name rule (${Object.entries(renamedTools())
      .map(([old, now]) => `${code(old)} → ${code(now)}`)
      .join(', ')}) answers [\`tool_renamed\`](/reference/errors/tool_renamed/) with \`new_name\`; nothing runs.`,
  ];
  return parts.join('\n');
}

/** One tool family's page: each tool with its scope, kind, annotations, input and output. */
export function renderMcpFamily(ops: readonly AnyOperation[], family: string): string {
  const tools = ops.filter((op) => op.mcp !== null && op.family === family);
  const parts: string[] = [
    `The ${familyLabel(family).toLowerCase()} tools of Flowport's MCP endpoint. How to connect, and every other family: [MCP reference](/reference/mcp/). Each tool is one [API operation](/reference/api/) with the same scope, inputs and outputs.`,
  ];
  // The same function builds the live tools/list (api/src/mcp/tools.ts): one derivation.
  const definitions = new Map(mcpToolDefinitions(ops).map((d) => [d.operation_id, d]));
  for (const op of tools) {
    const mcp = op.mcp as NonNullable<AnyOperation['mcp']>;
    const tool = definitions.get(op.operationId);
    if (!tool) throw new Error(`No MCP tool definition for ${op.operationId}.`);
    parts.push('', `## ${tool.name}`, '', `**${tool.title}.** ${mcp.description}`, '');
    parts.push(
      table(
        ['Fact', 'Value'],
        [
          [
            'Scope',
            tool.scope
              ? `${op.scopeNote ?? code(tool.scope)} ([grants and scopes](/agent-access/grants-and-scopes/))`
              : 'no scope (any grant token opens the MCP endpoint)',
          ],
          ['Kind', tool.kind],
          [
            'Same as',
            `[${code(`${tool.method} ${tool.path}`)}](${operationPagePath(op.operationId)}) (${code(op.operationId)})`,
          ],
          [
            'Annotations',
            Object.entries(tool.annotations)
              .map(([k, v]) => code(`${k}: ${v}`))
              .join(', '),
          ],
        ],
      ),
    );
    parts.push('', '### Input', '', fields(tool.inputSchema as JsonSchema, 'No input.'));
    // The output is the operation's response body: its outer fields named here, every field with
    // its type and description on the operation's page (once, so each family page stays small
    // enough to read whole as the descriptions grow).
    const outSchema = tool.outputSchema as JsonSchema | undefined;
    const outer = flattenFields(outSchema, refResolver(outSchema ?? {}), 1)
      .filter((r) => !/[.[]/.test(r.name))
      .map((r) => code(r.name));
    parts.push(
      '',
      '### Output',
      '',
      `The response body of [${code(`${op.method.toUpperCase()} ${op.path}`)}](${operationPagePath(op.operationId)}#responses), as structured content${outer.length > 0 ? `: ${outer.join(', ')}` : ''}. Every field, with its type and description, is on that page.`,
    );
  }
  return parts.join('\n');
}

export interface CliSources {
  /** Every command, as the CLI parser sees it (agent commands with their derived options). */
  commands: readonly CliCommand[];
  usage: (c: CliCommand) => string;
  globalOptions: readonly CommandOption[];
  connectionOptions: readonly CommandOption[];
  operatorOptions: readonly CommandOption[];
  env: { baseUrl: string; token: string };
  defaultBaseUrl: string;
  exitCodes: readonly ExitCodeDef[];
}

function optionTable(options: readonly CommandOption[]): string {
  if (options.length === 0) return 'No options of its own.';
  return table(
    ['Option', 'Required', 'Description'],
    options.map((o) => [code(o.flag), o.required ? 'yes' : 'no', o.description]),
  );
}

function commandSection(c: CliCommand, cli: CliSources): string[] {
  const parts = ['', `### ${code(cli.usage(c))}`, '', c.description, ''];
  if (c.op)
    parts.push(
      `Same operation as ${code(`${c.op.method.toUpperCase()} ${c.op.path}`)} (${code(c.op.operationId)}, [API reference](${operationPagePath(c.op.operationId)})). Scope: ${c.op.scope ? code(c.op.scope) : 'public (no grant needed)'}.`,
      '',
    );
  if (c.args.length)
    parts.push(
      table(
        ['Argument', 'Description'],
        c.args.map((a) => [code(`<${a.name}>`), a.description]),
      ),
      '',
    );
  parts.push(optionTable(c.options));
  return parts;
}

/** The CLI's real definitions, as the reference page renders them. */
export function cliReferenceSources(): CliSources {
  return {
    commands: cliCommands({ withAgentOptions: true }),
    usage: usageLine,
    globalOptions: GLOBAL_OPTIONS,
    connectionOptions: CONNECTION_OPTIONS,
    operatorOptions: COMMON_OPERATOR_OPTIONS,
    env: CLI_ENV,
    defaultBaseUrl: DEFAULT_BASE_URL_RULE,
    exitCodes: EXIT_CODES,
  };
}

export interface CliGroup {
  /** Page slug under /reference/cli/. */
  slug: string;
  title: string;
  /** One line for the index. */
  about: string;
  commands: CliCommand[];
}

/** `/reference/cli/<group>/`. */
export function cliGroupPath(slug: string): string {
  return `/reference/cli/${slug}/`;
}

/** The command groups, one page each: agent commands by operation family, then helper and operator commands. */
export function cliGroups(cli: CliSources = cliReferenceSources()): CliGroup[] {
  const agent = cli.commands.filter((c) => c.kind === 'agent');
  const families = [...new Set(agent.map((c) => c.op?.family ?? 'other'))];
  return [
    ...families.map((family) => ({
      slug: family,
      title: `${familyLabel(family)} commands`,
      about: `Agent commands: ${familyLabel(family).toLowerCase()} operations of the API, with a grant token.`,
      commands: agent.filter((c) => (c.op?.family ?? 'other') === family),
    })),
    {
      slug: 'helper',
      title: 'Helper commands',
      about: 'Run on your side; no grant needed.',
      commands: cli.commands.filter((c) => c.kind === 'helper'),
    },
    {
      slug: 'operator',
      title: 'Operator commands',
      about: "For a human on the machine that hosts Flowport, against its local store; out of agents' reach.",
      commands: cli.commands.filter((c) => c.kind === 'operator'),
    },
  ].filter((g) => g.commands.length > 0);
}

/** /reference/cli/: configuration, output, exit codes and options every command shares, then every command by group. */
export function renderCliIndex(cli: CliSources = cliReferenceSources()): string {
  const groups = cliGroups(cli);
  // The examples name real commands: an operation's, found by its operationId.
  const exampleOp = (id: string) => {
    const op = cli.commands.find((c) => c.op?.operationId === id)?.op;
    if (!op) throw new Error(`No CLI command for ${id}.`);
    return op;
  };
  const parts: string[] = [
    `The \`flowport\` command line tool ships with Flowport; in a checkout run it as \`${CLI_INVOCATION}\`, as every command on these pages is printed. It has three kinds of commands, kept apart here and in \`${commandLine('--help')}\`:`,
    '',
    `- **Agent commands**, one per [API operation](/reference/api/), generated from the operation registry. They call a running Flowport over HTTP with a grant token, exactly like the API: the same scopes, refusals, action intents and audit log.`,
    '- **Helper commands** (`docs`, `doctor`, `completion`) run on your side and need no grant (`doctor` checks yours if you have one).',
    '- **Operator commands**, for a human on the machine that hosts Flowport. They act on its local store (creating grants and endpoints, for example); no agent can reach them through the API or MCP.',
    '',
    `Add \`--help\` after any command for its arguments and options; \`${commandLine('--help', '--json')}\` prints the whole command tree as JSON. See [the CLI guide](/agent-access/cli/) for a walkthrough. Each command group has a page of its own, listed at the end of this page.`,
    '',
    '## Configuration',
    '',
    table(
      ['Setting', 'Environment', 'Option', 'Default'],
      [
        ['Base URL of Flowport', code(cli.env.baseUrl), code('--base-url <url>'), cli.defaultBaseUrl],
        ['Grant token', code(cli.env.token), code('--token-file <path>'), 'none'],
      ],
    ),
    '',
    `There is no token option: a token typed on the command line lands in shell history. \`--token-file\` reads the first line of a file (keep it \`chmod 600\`; the CLI warns otherwise) and wins over \`${cli.env.token}\`. The CLI never prints the token; only \`grants create\` prints a new grant's token, once.`,
    '',
    '## Output',
    '',
    '- On a terminal: readable text (tables for lists, aligned fields for objects, and the next command to type after a preview).',
    '- When stdout is not a terminal (piped, or captured by an agent) or with `--json`: the JSON Flowport answered.',
    "- Errors from Flowport: with JSON output, the problem object (`code`, `detail`, `docs_url`, and for refusals `refusal.reason` and `refusal.next_steps`) is printed to stdout so it can be parsed; on a terminal a readable block goes to stderr: the reason, the API's `detail`, the docs URL, then **To fix it**: the steps the [error catalog](/reference/errors/) names for the code as commands to type (the command you ran with the flag that fixes it, such as `--acknowledge-recent-delivery`, or the command that reads what to check), and the generic next steps last. Either way the exit code says what kind of failure it was.",
    '- Errors on the CLI\'s side (an unknown command or option, a value not among an option\'s choices, a Flowport it cannot reach): a sentence on stderr and, with JSON output, `{"error": {"kind": "<exit code name>", "exit_code": <n>, "detail": "…", "help": "npx flowport <command> --help"}}` on stdout. An object with `code` came from Flowport; one with `error.kind` from the CLI.',
    '- Anything that can take more than a moment shows a progress indicator on stderr (terminals only).',
    '',
    '## Exit codes',
    '',
    table(
      ['Code', 'Name', 'Meaning'],
      cli.exitCodes.map((e) => [code(String(e.code)), code(e.name), e.meaning]),
    ),
    '',
    '## Arguments and options of agent commands',
    '',
    `Path parameters are positional arguments (\`${agentCommandLine(exampleOp('previewReplay'))}\`). Query and body fields are options named after the API field in kebab case (\`acknowledge_recent_delivery\` becomes \`--acknowledge-recent-delivery\`): true/false fields are switches, numbers take a number, nested objects take JSON. \`${(exampleOp('confirmActionIntent').cli ?? []).join(' ')}\` takes \`--idempotency-key <key>\`; without it the CLI generates a key and prints it to stderr, so a retry after a timeout can reuse it and cannot run the action twice.`,
    '',
    'Every agent command also accepts:',
    '',
    optionTable([...cli.connectionOptions, ...cli.globalOptions]),
    '',
    '## Shell completion',
    '',
    'Generate the script once and source it from your shell startup file:',
    '',
    '```sh',
    'npx flowport completion bash > ~/.flowport-completion.bash   # then in ~/.bashrc: source ~/.flowport-completion.bash',
    'npx flowport completion zsh > ~/.flowport-completion.zsh     # then in ~/.zshrc, after compinit: source ~/.flowport-completion.zsh',
    '```',
    '',
    "It completes command words, options and option values with a fixed set. It is registered for the command name `flowport`: install the package so `flowport` is on your PATH, or add `alias flowport='npx flowport'`.",
    '',
    '## Command groups',
    '',
    table(
      ['Group', 'Commands', 'What they are'],
      groups.map((g) => [
        `[${g.title}](${cliGroupPath(g.slug)})`,
        g.commands.map((c) => code(c.words.join(' '))).join(', '),
        g.about,
      ]),
    ),
  ];
  for (const g of groups) {
    parts.push(
      '',
      `### ${g.title}`,
      '',
      table(
        ['Command', 'What it does'],
        g.commands.map((c) => [`[${code(cli.usage(c))}](${cliGroupPath(g.slug)})`, c.summary]),
      ),
    );
  }
  return parts.join('\n');
}

/** One command group's page: every command with its usage, arguments and options. */
export function renderCliGroup(group: CliGroup, cli: CliSources = cliReferenceSources()): string {
  const parts: string[] = [
    `${group.about} Configuration, output, exit codes and the options every command accepts: [CLI reference](/reference/cli/).`,
  ];
  if (group.slug === 'operator') {
    parts.push(
      '',
      'Run by a human on the machine that hosts Flowport, against its local store (the same data directory or database the server uses). Operator commands that use the store also accept:',
      '',
      optionTable([...cli.operatorOptions, ...cli.globalOptions]),
    );
  }
  for (const c of group.commands)
    parts.push(...commandSection(c, cli).map((l) => (l.startsWith('### ') ? `## ${l.slice(4)}` : l)));
  return parts.join('\n');
}

// Error-code pages live in ./error-pages.ts; re-exported for the generator.
export { errorPageSummary, renderErrorIndex, renderErrorPage } from './error-pages.ts';

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
