// Agent commands, derived from the operation registry: each operation's `cli`
// words name the command, and its OpenAPI parameters and request body (built
// from the same registry) become the arguments and options. Path parameters are
// positional arguments in path order (`flowport preview-replay <event_id>`); query and
// body fields are `--kebab-case` options; declared headers are options too.
// Nothing here is written per operation.
// Build time only: `npm run openapi` writes the result to ./agent-commands.json, which
// the CLI reads (./agent-table.ts); the CLI itself never loads this module or the registry.
import { buildOpenApiDocument } from '../http/openapi.ts';
import type { AnyOperation } from '../core/types.ts';
import { pathParams } from '../lib/command-line.ts';
import { ActionIntentSchema } from '../operations/intents/shared.ts';
import type { AgentArgument, AgentCommand, AgentOption, ValueKind } from './agent-table.ts';
import { GENERATED_HEADERS } from './definitions.ts';

export type { AgentArgument, AgentCommand, AgentOption, ValueKind };

type Json = Record<string, unknown>;

export function kebab(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase();
}

function kindOf(schema: Json, resolve: (s: Json) => Json): { kind: ValueKind; choices?: string[] } {
  const s = resolve(schema);
  // A nullable field (`type: ["string", "null"]`) takes the value of its one non-null type.
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== 'null');
    if (types.length === 1) return kindOf({ ...s, type: types[0] }, resolve);
  }
  if (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string')) return { kind: 'string', choices: s.enum };
  if (s.type === 'boolean') return { kind: 'boolean' };
  if (s.type === 'integer' || s.type === 'number') return { kind: 'number' };
  if (s.type === 'string') return { kind: 'string' };
  const variants = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : null) as Json[] | null;
  if (variants) {
    const nonNull = variants.map(resolve).filter((v) => v.type !== 'null');
    if (nonNull.length === 1 && nonNull[0]) return kindOf(nonNull[0], resolve);
  }
  return { kind: 'json' };
}

function describeOption(description: string | undefined, kind: ValueKind, choices?: readonly string[]): string {
  const parts = [description?.trim() || ''];
  if (choices) parts.push(`One of: ${choices.join(', ')}.`);
  if (kind === 'json') parts.push('JSON value.');
  return parts.filter(Boolean).join(' ');
}

function flagFor(name: string, kind: ValueKind, choices?: readonly string[]): string {
  if (name === 'idempotency-key') return `--${name} <key>`;
  if (kind === 'boolean') return `--${name}`;
  if (kind === 'json') return `--${name} <json>`;
  if (kind === 'number') return `--${name} <n>`;
  if (choices && choices.length <= 4) return `--${name} <${choices.join('|')}>`;
  return `--${name} <value>`;
}

let cache: AgentCommand[] | null = null;
let cacheFor: readonly AnyOperation[] | null = null;

/** Every operation with `cli` words as a command, built from the OpenAPI document of `operations`. */
export function agentCommands(operations: readonly AnyOperation[]): AgentCommand[] {
  if (cache && cacheFor === operations) return cache;
  const doc = buildOpenApiDocument(operations, {}) as unknown as {
    paths: Record<string, Record<string, Json>>;
    components?: { schemas?: Record<string, Json> };
  };
  const schemas = doc.components?.schemas ?? {};
  const resolve = (s: Json): Json => {
    let cur = s;
    for (let i = 0; i < 10 && typeof cur.$ref === 'string'; i++)
      cur = schemas[(cur.$ref as string).replace('#/components/schemas/', '')] ?? {};
    return cur;
  };
  const out: AgentCommand[] = [];
  for (const op of operations) {
    if (!op.cli) continue;
    const spec = doc.paths[op.path]?.[op.method];
    if (!spec) throw new Error(`No OpenAPI operation for ${op.method.toUpperCase()} ${op.path} (${op.operationId}).`);
    const params = (spec.parameters ?? []) as Json[];
    const args: AgentArgument[] = pathParams(op).map((name) => {
      const p = params.find((x) => x.in === 'path' && x.name === name);
      const schema = (p?.schema ?? {}) as Json;
      const description = (p?.description ?? schema.description) as string | undefined;
      const example = schema.example as string | undefined;
      // `event_id` → "Event id, e.g. `evt_…`" when the contract gives no description.
      const words = name.replaceAll('_', ' ');
      const label = `${words.charAt(0).toUpperCase()}${words.slice(1)}`;
      return { name, description: description ?? (example ? `${label}, e.g. \`${example}\`.` : `${label}.`) };
    });
    const options: AgentOption[] = [];
    for (const p of params) {
      if (p.in !== 'query' && p.in !== 'header') continue;
      const field = p.name as string;
      const schema = (p.schema ?? {}) as Json;
      const { kind, choices } =
        p.in === 'header' ? { kind: 'string' as const, choices: undefined } : kindOf(schema, resolve);
      const name = kebab(field);
      const description =
        p.in === 'header'
          ? (GENERATED_HEADERS[field] ?? `The \`${field}\` request header.`)
          : ((p.description ?? schema.description) as string | undefined);
      options.push({
        name,
        field,
        location: p.in === 'header' ? 'header' : 'query',
        kind,
        ...(choices ? { choices } : {}),
        flag: flagFor(name, kind, choices),
        description: describeOption(description, kind, choices),
        required: p.required === true && !(field in GENERATED_HEADERS),
      });
    }
    const bodySchema = (spec.requestBody as Json | undefined)?.content as Record<string, { schema?: Json }> | undefined;
    const body = bodySchema?.['application/json']?.schema ? resolve(bodySchema['application/json'].schema) : null;
    if (body) {
      const required = new Set((body.required ?? []) as string[]);
      for (const [field, raw] of Object.entries((body.properties ?? {}) as Record<string, Json>)) {
        const schema = resolve(raw);
        const { kind, choices } = kindOf(schema, resolve);
        const name = kebab(field);
        options.push({
          name,
          field,
          location: 'body',
          kind,
          ...(choices ? { choices } : {}),
          flag: flagFor(name, kind, choices),
          description: describeOption((raw.description ?? schema.description) as string | undefined, kind, choices),
          required: required.has(field),
        });
      }
    }
    out.push({
      op: {
        operationId: op.operationId,
        method: op.method,
        path: op.path,
        summary: op.summary,
        description: op.description,
        family: op.family,
        scope: op.scope,
        ...(op.scopeNote ? { scopeNote: op.scopeNote } : {}),
        ...(op.scopeAnyOf ? { scopeAnyOf: [...op.scopeAnyOf] } : {}),
        cli: op.cli,
        intent: op.response === ActionIntentSchema,
        body: op.request.body !== undefined,
      },
      words: op.cli,
      args,
      options,
    });
  }
  cache = out;
  cacheFor = operations;
  return out;
}

/** The text of ./agent-commands.json for `operations` (`npm run openapi` writes it). */
export function agentCommandsJson(operations: readonly AnyOperation[]): string {
  return `${JSON.stringify(agentCommands(operations), null, 2)}\n`;
}
