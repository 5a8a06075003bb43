// `flowport …`: operator commands (local store, human only) and API commands
// derived from the registry (HTTP against a running Flowport with a grant token).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { OPERATIONS } from '../operations/registry.ts';
import type { AnyOperation } from '../operations/types.ts';
import { createRuntime } from '../runtime.ts';
import {
  COMMON_API_OPTIONS,
  COMMON_OPERATOR_OPTIONS,
  OPERATOR_COMMANDS,
  type OperatorCommand,
  type OperatorCommandOption,
  optionName,
  optionTakesValue,
} from './definitions.ts';
import { OPERATOR_HANDLERS, type OptionValues } from './handlers.ts';

export const CLI_ENV = { url: 'FLOWPORT_URL', token: 'FLOWPORT_GRANT_TOKEN' } as const;

export function kebab(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase();
}

/** Input fields of an operation as CLI options (`eventId` → `--event-id <value>`). */
export function apiCommandOptions(
  op: AnyOperation,
): (OperatorCommandOption & { field: string; location: 'params' | 'query' | 'body' })[] {
  const out: (OperatorCommandOption & { field: string; location: 'params' | 'query' | 'body' })[] = [];
  for (const location of ['params', 'query', 'body'] as const) {
    const schema = op.request[location];
    if (!schema) continue;
    for (const [field, s] of Object.entries(
      schema.shape as Record<string, { isOptional?: () => boolean; description?: string }>,
    )) {
      out.push({
        field,
        location,
        flag: `--${kebab(field)} <value>`,
        description: s.description ?? `${field} (${location === 'params' ? 'path' : location})`,
        required: location === 'params' || !(s.isOptional?.() ?? false),
      });
    }
  }
  return out;
}

function parseWith(options: OperatorCommandOption[], argv: string[]): OptionValues {
  const spec: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const o of options)
    spec[optionName(o)] = {
      type: optionTakesValue(o) ? 'string' : 'boolean',
      ...(o.multiple ? { multiple: true } : {}),
    };
  const { values } = parseArgs({ args: argv, options: spec, strict: true, allowPositionals: false });
  for (const o of options) {
    if (o.required && values[optionName(o)] === undefined) throw new UsageError(`Missing required option ${o.flag}.`);
  }
  return values as OptionValues;
}

export class UsageError extends Error {}

function usage(): string {
  const lines = [
    'Usage: flowport <command> [options]',
    '',
    'Operator commands (local store; run by a human on the host):',
  ];
  for (const c of OPERATOR_COMMANDS) lines.push(`  flowport ${c.command.join(' ').padEnd(24)} ${c.summary}`);
  lines.push('', 'API commands (need a running Flowport and a grant token):');
  for (const op of OPERATIONS) if (op.cli) lines.push(`  flowport ${op.cli.join(' ').padEnd(24)} ${op.summary}`);
  lines.push('', 'Add --help after a command for its options.');
  return lines.join('\n');
}

function commandHelp(words: string[], summary: string, options: OperatorCommandOption[]): string {
  return [
    `flowport ${words.join(' ')}`,
    '',
    summary,
    '',
    'Options:',
    ...options.map((o) => `  ${o.flag.padEnd(28)} ${o.description}${o.required ? ' (required)' : ''}`),
  ].join('\n');
}

function matchWords<T extends { words: readonly string[] }>(candidates: T[], argv: string[]): T | undefined {
  return candidates
    .filter((c) => c.words.every((w, i) => argv[i] === w))
    .sort((a, b) => b.words.length - a.words.length)[0];
}

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

export async function runCli(argv: string[], io: CliIO): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    io.out(usage());
    return argv.length === 0 ? 2 : 0;
  }
  const operator = matchWords(
    OPERATOR_COMMANDS.map((c) => ({ ...c, words: c.command })),
    argv,
  );
  const api = matchWords(
    OPERATIONS.filter((o) => o.cli).map((o) => ({ op: o, words: o.cli as readonly string[] })),
    argv,
  );
  try {
    if (operator && (!api || operator.words.length >= api.words.length))
      return await runOperator(operator, argv.slice(operator.words.length), io);
    if (api) return await runApi(api.op, argv.slice(api.words.length), io);
    io.err(`Unknown command: ${argv.join(' ')}\n\n${usage()}`);
    return 2;
  } catch (err) {
    if (
      err instanceof UsageError ||
      (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      io.err(`${err.message}`);
      return 2;
    }
    if (err instanceof AppError) {
      io.err(`${err.code}: ${err.message}`);
      return 1;
    }
    io.err(err instanceof Error ? err.message : String(err));
    return 1;
  }
}

async function runOperator(cmd: OperatorCommand, argv: string[], io: CliIO): Promise<number> {
  const options = [...cmd.options, ...COMMON_OPERATOR_OPTIONS];
  if (argv.includes('--help')) {
    io.out(commandHelp(cmd.command, cmd.summary, options));
    return 0;
  }
  const values = parseWith(options, argv);
  const handler = OPERATOR_HANDLERS[cmd.command.join(' ')];
  if (!handler) throw new Error(`No handler for ${cmd.command.join(' ')}`);
  const env: Record<string, string | undefined> = { ...io.env, FLOWPORT_WORKER: 'off', FLOWPORT_LOG_LEVEL: 'silent' };
  if (typeof values['data-dir'] === 'string') env.FLOWPORT_DATA_DIR = values['data-dir'];
  const runtime = await createRuntime(loadConfig(env));
  try {
    const result = await handler({ options: values, services: runtime.services });
    io.out(values.json || result.text === undefined ? JSON.stringify(result.json, null, 2) : result.text);
    return result.exitCode ?? 0;
  } finally {
    await runtime.close();
  }
}

async function runApi(op: AnyOperation, argv: string[], io: CliIO): Promise<number> {
  const fields = apiCommandOptions(op);
  const options = [...fields, ...COMMON_API_OPTIONS, { flag: '--json', description: 'Print JSON (the default).' }];
  if (argv.includes('--help')) {
    io.out(commandHelp(op.cli as string[], op.description, options));
    return 0;
  }
  const values = parseWith(options, argv);
  const base = (typeof values.url === 'string' ? values.url : io.env[CLI_ENV.url]) ?? 'http://localhost:8787';
  const token = typeof values.token === 'string' ? values.token : io.env[CLI_ENV.token];
  let path = op.path;
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[optionName(f)];
    if (v === undefined || typeof v === 'boolean') continue;
    const value = Array.isArray(v) ? (v[0] ?? '') : v;
    if (f.location === 'params') path = path.replace(`{${f.field}}`, encodeURIComponent(value));
    else if (f.location === 'query') query.set(f.field, value);
    else body[f.field] = parseValue(value);
  }
  const url = `${base.replace(/\/+$/, '')}${path}${query.size ? `?${query}` : ''}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const init: RequestInit = { method: op.method.toUpperCase(), headers };
  if (op.request.body) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let out: string = text;
  try {
    out = JSON.stringify(JSON.parse(text), null, 2);
  } catch {}
  if (res.ok) io.out(out);
  else io.err(out);
  return res.ok ? 0 : 1;
}

function parseValue(v: string): unknown {
  if (/^(true|false|null|-?\d+(\.\d+)?)$/.test(v) || /^[[{]/.test(v)) {
    try {
      return JSON.parse(v);
    } catch {}
  }
  return v;
}

if (import.meta.main) {
  const code = await runCli(process.argv.slice(2), {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    env: process.env,
  });
  process.exitCode = code;
}
