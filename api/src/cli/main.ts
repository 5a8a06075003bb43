// `flowport …`: one parser for three kinds of commands, kept apart in help and
// docs. Agent commands come from the table generated from the operation registry
// (./agent-table.ts) and call a running Flowport over HTTP with a grant; helper
// commands (docs, doctor, completion) run client-side; operator commands act on the
// local store as a human on the host.
// Startup cost matters (`npm run bench:cli`): this module loads only small modules.
// The registry and the server are never loaded; helper and operator code, the store
// and the runtime are imported when their command runs.
// tests/architecture/cli-startup.test.ts keeps it so.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CLI_ENV, loadConfig } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { PRODUCT } from '../lib/package-info.ts';
import { closestName, unknownNameMessage } from '../lib/suggest.ts';
import { familyLabel } from '../operations/families.ts';
import { agentCommandLine, agentCommandWords, CLI_INVOCATION, commandLine, pathParams } from '../lib/command-line.ts';
import {
  AGENT_COMMANDS,
  type AgentCommand,
  type AgentOperation,
  agentCommandById,
  GENERATED_HEADERS,
} from './agent-table.ts';
import { request, resolveConnection, UnreachableError, UsageError } from './client.ts';
import type { CompletionCommand } from './completion.ts';
import {
  type CommandArgument,
  type CommandOption,
  COMMON_OPERATOR_OPTIONS,
  CONNECTION_OPTIONS,
  DEFAULT_BASE_URL_RULE,
  GLOBAL_OPTIONS,
  HELPER_COMMANDS,
  OPERATOR_COMMANDS,
  type OperatorCommand,
  optionName,
  optionTakesValue,
} from './definitions.ts';
import { unknownCommand } from './unknown-command.ts';
import { watchIntent } from './watch.ts';
import { EXIT, EXIT_CODES, exitCodeForHttp } from './exit-codes.ts';
import { handlersFor, type OperatorHandler, type OptionValues, type StandaloneHandler } from './handlers.ts';
import { type CliIO, processIO, withProgress } from './io.ts';
import {
  cliErrorJson,
  type IntentView,
  type ProblemView,
  renderIntent,
  renderProblem,
  renderReadable,
} from './output.ts';
import { refusalContext } from './refusal-context.ts';

export type { CliIO } from './io.ts';
export { UsageError } from './client.ts';

export type CommandKind = 'agent' | 'helper' | 'operator';

/** One command as help, completion, the docs page and the parser see it. */
export interface CliCommand {
  kind: CommandKind;
  words: readonly string[];
  summary: string;
  /** Longer text for `--help` and the reference page. */
  description: string;
  args: CommandArgument[];
  /** The command's own options (not the shared ones). */
  options: CommandOption[];
  /** Options shared by every command of this kind, then the global ones. */
  sharedOptions: CommandOption[];
  op?: AgentOperation;
  def?: OperatorCommand;
}

const NO_TOKEN_FLAG = `There is no --token option: a token typed on the command line lands in shell history. Set ${CLI_ENV.token} in the environment or pass --token-file <path>.`;

/** Every command, agent ones first (registry order), then helpers, then operator commands. */
export function cliCommands(options: { withAgentOptions?: boolean } = {}): CliCommand[] {
  const agent: CliCommand[] = AGENT_COMMANDS.map(({ op, ...full }) => {
    const cmd = options.withAgentOptions ? full : null;
    return {
      kind: 'agent',
      words: op.cli,
      summary: op.summary,
      description: op.description,
      args: cmd
        ? cmd.args.map((a) => ({ name: a.name, description: a.description }))
        : pathParams(op).map((name) => ({ name, description: '' })),
      options: cmd ? cmd.options : [],
      sharedOptions: [...CONNECTION_OPTIONS, ...GLOBAL_OPTIONS],
      op,
    };
  });
  const fromDef = (kind: CommandKind, def: OperatorCommand): CliCommand => ({
    kind,
    words: def.command,
    summary: def.summary,
    description: def.summary,
    args: def.args ?? [],
    options: def.options,
    sharedOptions:
      kind === 'operator' && def.store !== false ? [...COMMON_OPERATOR_OPTIONS, ...GLOBAL_OPTIONS] : GLOBAL_OPTIONS,
    def,
  });
  return [
    ...agent,
    ...HELPER_COMMANDS.map((d) => fromDef('helper', d)),
    ...OPERATOR_COMMANDS.map((d) => fromDef('operator', d)),
  ];
}

/** `get-event <event_id>`: a command's words and arguments, without the invocation. */
export function commandWords(c: CliCommand): string {
  return c.op ? (agentCommandWords(c.op) ?? '') : [...c.words, ...c.args.map((a) => `<${a.name}>`)].join(' ');
}

/** `npx flowport get-event <event_id>`: a command as it is typed in a checkout. */
export function usageLine(c: CliCommand): string {
  return commandLine(commandWords(c));
}

function wantJson(values: OptionValues, io: CliIO): boolean {
  return values.json === true || !io.stdoutIsTTY;
}

// ---------- help ----------

function optionLines(options: readonly CommandOption[]): string[] {
  const w = Math.max(0, ...options.map((o) => o.flag.length));
  return options.map((o) => `  ${o.flag.padEnd(w)}  ${o.description}${o.required ? ' (required)' : ''}`);
}

function usage(): string {
  const all = cliCommands();
  const line = (c: CliCommand, w: number) => `    ${commandWords(c).padEnd(w)}  ${c.summary}`;
  const lines = [
    `flowport ${PRODUCT.version}: the ${PRODUCT.name} command line.`,
    '',
    `Usage: ${CLI_INVOCATION} <command> [arguments] [options]`,
    '',
    `Agent commands: call a running Flowport over HTTP with a grant token (${CLI_ENV.token} or --token-file).`,
  ];
  const agent = all.filter((c) => c.kind === 'agent');
  const w = Math.max(...all.map((c) => commandWords(c).length));
  const families = [...new Set(agent.map((c) => c.op?.family as string))];
  for (const f of families) {
    lines.push(`  ${familyLabel(f)}`);
    for (const c of agent.filter((a) => a.op?.family === f)) lines.push(line(c, w));
  }
  lines.push('', 'Helper commands: no grant needed (doctor checks yours if you have one).');
  for (const c of all.filter((x) => x.kind === 'helper')) lines.push(line(c, w));
  lines.push(
    '',
    'Operator commands: for a human on the host; they act on the local store and are never reachable by agents.',
  );
  for (const c of all.filter((x) => x.kind === 'operator')) lines.push(line(c, w));
  lines.push(
    '',
    `Environment: ${CLI_ENV.baseUrl} (default: ${DEFAULT_BASE_URL_RULE}), ${CLI_ENV.token} (the grant token).`,
    'Output: readable text on a terminal, JSON when piped or with --json.',
    `Exit codes: ${EXIT_CODES.map((e) => `${e.code} ${e.name}`).join(', ')}.`,
    'Add --help after a command for its arguments and options (--help --json: the whole tree as JSON); --version prints the version.',
    `\`${commandLine('docs')}\` prints where the docs live; \`${commandLine('doctor')}\` checks your setup.`,
  );
  return lines.join('\n');
}

function commandHelp(c: CliCommand): string {
  const lines = [
    `Usage: ${usageLine(c)}${c.options.length || c.sharedOptions.length ? ' [options]' : ''}`,
    '',
    c.description,
  ];
  if (c.op) {
    lines.push(
      '',
      `Scope: ${c.op.scopeNote ?? c.op.scope ?? 'public (no grant needed)'}${c.op.scopeNote ? '' : '.'}  Same as ${c.op.method.toUpperCase()} ${c.op.path} (${c.op.operationId}).`,
    );
  }
  if (c.kind === 'operator') lines.push('', 'Operator command: acts on the local store of this machine.');
  if (c.args.length) {
    lines.push('', 'Arguments:');
    const w = Math.max(...c.args.map((a) => a.name.length + 2));
    for (const a of c.args) lines.push(`  ${`<${a.name}>`.padEnd(w)}  ${a.description}`);
  }
  if (c.options.length) lines.push('', 'Options:', ...optionLines(c.options));
  lines.push(
    '',
    c.kind === 'agent' ? 'Connection and output options:' : 'Shared options:',
    ...optionLines(c.sharedOptions),
  );
  return lines.join('\n');
}

/** `flowport --help --json`: the command tree for programs. */
function helpJson(): unknown {
  return {
    name: 'flowport',
    version: PRODUCT.version,
    environment: { base_url: CLI_ENV.baseUrl, token: CLI_ENV.token, default_base_url: DEFAULT_BASE_URL_RULE },
    exit_codes: EXIT_CODES,
    commands: cliCommands({ withAgentOptions: true }).map((c) => ({
      kind: c.kind,
      command: c.words.join(' '),
      usage: usageLine(c),
      summary: c.summary,
      ...(c.op
        ? {
            operation_id: c.op.operationId,
            scope: c.op.scope,
            ...(c.op.scopeAnyOf ? { scope_any_of: c.op.scopeAnyOf } : {}),
            method: c.op.method.toUpperCase(),
            path: c.op.path,
          }
        : {}),
      arguments: c.args.map((a) => a.name),
      options: [...c.options, ...c.sharedOptions].map((o) => ({ flag: o.flag, required: o.required === true })),
    })),
  };
}

// ---------- parsing ----------

const LEADING_VALUE_FLAGS = new Set(['--base-url', '--token-file', '--data-dir']);

/** Moves options typed before the command words (`flowport --json list-events`) after them. */
function splitLeading(argv: string[]): { words: string[]; rest: string[] } {
  const moved: string[] = [];
  let i = 0;
  while (i < argv.length && (argv[i] as string).startsWith('-')) {
    const t = argv[i] as string;
    moved.push(t);
    i++;
    if (LEADING_VALUE_FLAGS.has(t) && i < argv.length) moved.push(argv[i++] as string);
  }
  const words: string[] = [];
  while (i < argv.length && !(argv[i] as string).startsWith('-')) words.push(argv[i++] as string);
  return { words, rest: [...moved, ...argv.slice(i)] };
}

function normalise(argv: string[]): string[] {
  return argv.map((a) => (a === '-h' ? '--help' : a));
}

function parseFor(c: CliCommand, args: string[]): { values: OptionValues; positionals: string[] } {
  for (const t of args) if (t === '--token' || t.startsWith('--token=')) throw new UsageError(NO_TOKEN_FLAG);
  const options = [...c.options, ...c.sharedOptions];
  const spec: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const o of options)
    spec[optionName(o)] = {
      type: optionTakesValue(o) ? 'string' : 'boolean',
      ...(o.multiple ? { multiple: true } : {}),
    };
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: spec, strict: true, allowPositionals: true });
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      // Name only the option, never a value typed after `=` (it could be a secret).
      const bad = args.find((a) => a.startsWith('-') && !((a.replace(/^-+/, '').split('=')[0] as string) in spec));
      const typed = (bad ?? '').split('=')[0] as string;
      const near = closestName(typed.replace(/^-+/, ''), Object.keys(spec));
      throw new UsageError(
        `${unknownNameMessage('option', typed, near ? `--${near}` : null)} Run \`${commandLine(...c.words, '--help')}\` for the options of \`${usageLine(c)}\`.`,
      );
    }
    if (code.startsWith('ERR_PARSE_ARGS')) throw new UsageError((err as Error).message);
    throw err;
  }
  const values = parsed.values as OptionValues;
  for (const o of c.options) {
    const v = values[optionName(o)];
    if (o.required && v === undefined)
      throw new UsageError(`Missing required option ${o.flag} for \`${usageLine(c)}\`.`);
    if (o.choices && v !== undefined && typeof v !== 'boolean') {
      for (const one of Array.isArray(v) ? v : [v])
        if (!o.choices.includes(one))
          throw new UsageError(`${o.flag.split(' ')[0]} must be one of ${o.choices.join(', ')}; got "${one}".`);
    }
  }
  const want = c.args.length;
  if (parsed.positionals.length < want) {
    const missing = c.args.slice(parsed.positionals.length).map((a) => `<${a.name}>`);
    throw new UsageError(`Missing ${missing.join(' ')}. Usage: ${usageLine(c)}`);
  }
  if (parsed.positionals.length > want)
    throw new UsageError(
      `Unexpected argument "${parsed.positionals[want]}" for \`${usageLine(c)}\`. Run \`${commandLine(...c.words, '--help')}\`.`,
    );
  for (const [i, a] of c.args.entries()) {
    const v = parsed.positionals[i] as string;
    if (a.choices && !a.choices.includes(v))
      throw new UsageError(`<${a.name}> must be one of ${a.choices.join(', ')}; got "${v}".`);
  }
  return { values, positionals: parsed.positionals };
}

function match(all: CliCommand[], words: string[]): CliCommand | undefined {
  return all
    .filter((c) => c.words.length <= words.length && c.words.every((w, i) => words[i] === w))
    .sort((a, b) => b.words.length - a.words.length)[0];
}

// ---------- running ----------

export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const { words, rest } = splitLeading(normalise(argv));
  const help = rest.includes('--help') || words[0] === 'help';
  const cmdWords = words[0] === 'help' ? words.slice(1) : words;
  const all = cliCommands();
  if (cmdWords.length === 0) {
    if (rest.includes('--version')) {
      io.out(`flowport ${PRODUCT.version}`);
      return EXIT.ok.code;
    }
    if (help && rest.includes('--json')) {
      io.out(JSON.stringify(helpJson(), null, 2));
      return EXIT.ok.code;
    }
    if (help) {
      io.out(usage());
      return EXIT.ok.code;
    }
    if (rest.some((t) => t === '--token' || t.startsWith('--token='))) {
      io.err(NO_TOKEN_FLAG);
      return EXIT.usage.code;
    }
    io.err(usage());
    return EXIT.usage.code;
  }
  const c = match(all, cmdWords);
  const group = all.filter((x) => x.words.length > cmdWords.length && cmdWords.every((w, i) => x.words[i] === w));
  if (help && group.length && (!c || c.words.length < cmdWords.length)) {
    // `flowport endpoints --help`: the commands under that word, each with its kind.
    const w = Math.max(...group.map((x) => usageLine(x).length));
    io.out(
      [
        `Commands under \`${commandLine(...cmdWords)}\`:`,
        ...group.map((x) => `  ${usageLine(x).padEnd(w)}  ${x.summary}${x.kind === 'operator' ? ' (operator)' : ''}`),
        '',
        'Add --help after one of them for its arguments and options.',
      ].join('\n'),
    );
    return EXIT.ok.code;
  }
  // With --json (or when stdout is not a terminal) every error is JSON on stdout too (issue 43).
  const jsonErrors = rest.includes('--json') || !io.stdoutIsTTY;
  const fail = (exit: { code: number; name: string }, message: string, helpWords?: readonly string[]) => {
    io.err(message);
    if (jsonErrors)
      io.out(cliErrorJson(exit.name, exit.code, message, helpWords ? commandLine(...helpWords, '--help') : undefined));
    return exit.code;
  };
  if (!c || (c.args.length === 0 && cmdWords.length > c.words.length && !help))
    return fail(EXIT.usage, unknownCommand(all, cmdWords), []);
  const full =
    c.kind === 'agent' ? (cliCommands({ withAgentOptions: true }).find((x) => x.op === c.op) as CliCommand) : c;
  if (help) {
    io.out(commandHelp(full));
    return EXIT.ok.code;
  }
  try {
    const { values, positionals } = parseFor(full, [...cmdWords.slice(c.words.length), ...rest]);
    if (full.kind === 'agent') return await runAgent(full.op as AgentOperation, values, positionals, io);
    if (full.kind === 'helper') return await runHelper(full, values, positionals, io);
    return await runOperator(full.def as OperatorCommand, values, positionals, io);
  } catch (err) {
    if (err instanceof UsageError) return fail(EXIT.usage, err.message, c.words);
    if (err instanceof UnreachableError) return fail(EXIT.unreachable, err.message);
    if (err instanceof AppError) {
      io.err(`${err.code}: ${err.message}`);
      return err.code === 'invalid_request'
        ? EXIT.usage.code
        : err.code === 'not_found'
          ? EXIT.notFound.code
          : EXIT.failed.code;
    }
    return fail(EXIT.failed, err instanceof Error ? err.message : String(err));
  }
}

function coerce(flag: string, kind: AgentCommand['options'][number]['kind'], v: string | boolean | string[]): unknown {
  if (typeof v === 'boolean') return v;
  const text = Array.isArray(v) ? (v[v.length - 1] ?? '') : v;
  if (kind === 'number') {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${flag} takes a number; got "${text}".`);
    return n;
  }
  if (kind === 'json') {
    try {
      return JSON.parse(text);
    } catch {
      throw new UsageError(`${flag} takes JSON, e.g. '{"key":"value"}'; the value is not valid JSON.`);
    }
  }
  return text;
}

async function runAgent(op: AgentOperation, values: OptionValues, positionals: string[], io: CliIO): Promise<number> {
  const cmd = agentCommandById(op.operationId);
  const json = wantJson(values, io);
  const conn = resolveConnection(values, io.env);
  if (conn.tokenFileWarning) io.err(`warning: ${conn.tokenFileWarning}`);
  let path = op.path;
  cmd.args.forEach((a, i) => {
    const value = positionals[i] as string;
    // URL resolution removes '.' and '..' segments even percent-encoded, so such an id would
    // reach another route: refuse it here, where the mistake can be named.
    if (/^(\.|%2e){1,2}$/i.test(value)) throw new UsageError(`<${a.name}> "${value}" is not an id.`);
    path = path.replace(`{${a.name}}`, encodeURIComponent(value));
  });
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  const headers: Record<string, string> = {};
  for (const o of cmd.options) {
    const v = values[o.name];
    const flag = `--${o.name}`;
    if (v === undefined) {
      if (o.location === 'header' && o.field in GENERATED_HEADERS) {
        const key = randomUUID();
        headers[o.field] = key;
        io.err(`${o.field}: ${key} (generated). To retry safely, run the same command again with ${flag} ${key}.`);
      }
      continue;
    }
    if (o.location === 'query') query.set(o.field, String(coerce(flag, o.kind === 'number' ? 'number' : 'string', v)));
    else if (o.location === 'header') headers[o.field] = String(coerce(flag, 'string', v));
    else body[o.field] = coerce(flag, o.kind, v);
  }
  const res = await withProgress(io, `${op.method.toUpperCase()} ${path}`, () =>
    request(conn, {
      method: op.method.toUpperCase(),
      path,
      query,
      headers,
      ...(op.body ? { body } : {}),
      auth: op.scope !== null,
    }),
  );
  if (res.ok) {
    if (json) io.out(res.json === null ? res.text : JSON.stringify(res.json, null, 2));
    else {
      const width = io.columns || 120;
      io.out(
        op.intent && res.json
          ? renderIntent(res.json as IntentView, width)
          : renderReadable(res.json ?? res.text, width),
      );
      const hints = nextHints(op, cmd, res.json);
      if (hints.length) io.out(['', ...hints].join('\n'));
    }
    return EXIT.ok.code;
  }
  const problem = (res.json && typeof res.json === 'object' ? res.json : null) as ProblemView | null;
  const code = exitCodeForHttp(res.status, problem);
  if (json)
    io.out(
      problem
        ? JSON.stringify(problem, null, 2)
        : JSON.stringify({ status: res.status, body: res.text.slice(0, 2_000) }, null, 2),
    );
  else {
    io.err(renderProblem(res.status, problem, res.text, refusalContext(cmd, positionals, values)));
    if (res.status === 401 && !conn.token)
      io.err(
        `No grant token was sent: set ${CLI_ENV.token} or pass --token-file <path>. \`${commandLine('doctor')}\` checks the setup.`,
      );
  }
  return code;
}

/** What to type next, after a preview or a partial list (text output only). */
function nextHints(op: AgentOperation, cmd: AgentCommand, body: unknown): string[] {
  if (!body || typeof body !== 'object') return [];
  const b = body as { id?: string; state?: string; required_scope?: string; page?: { next_cursor?: string | null } };
  if (op.intent && b.id && b.state === 'previewed') {
    const line = (id: string) =>
      (agentCommandLine(agentCommandById(id).op) ?? '').replace('<intent_id>', b.id as string);
    return [
      `Next: ${line('confirmActionIntent')}   (needs ${b.required_scope})`,
      `  or: ${line('cancelActionIntent')}`,
    ];
  }
  const next = b.page?.next_cursor;
  if (next && cmd.options.some((o) => o.name === 'cursor')) return [`More: ${agentCommandLine(op)} --cursor ${next}`];
  return [];
}

async function runHelper(c: CliCommand, values: OptionValues, positionals: string[], io: CliIO): Promise<number> {
  const name = c.words.join(' ');
  if (name === 'completion') {
    const { bashCompletion, zshCompletion } = await import('./completion.ts');
    const commands: CompletionCommand[] = cliCommands({ withAgentOptions: true }).map((x) => {
      const options = [...x.options, ...x.sharedOptions];
      const vals: Record<string, readonly string[]> = {};
      for (const o of options) if (o.choices) vals[o.flag.split(' ')[0] as string] = o.choices;
      return {
        words: x.words,
        flags: options.map((o) => o.flag.split(' ')[0] as string),
        values: vals,
        ...(x.args[0]?.choices ? { argChoices: x.args[0].choices } : {}),
      };
    });
    io.out(positionals[0] === 'zsh' ? zshCompletion(commands) : bashCompletion(commands));
    return EXIT.ok.code;
  }
  const conn = resolveConnection(values, io.env);
  if (name === 'docs') {
    const { docsPointers, renderDocsPointers } = await import('./docs-command.ts');
    const answer = await withProgress(io, `Reading the manifest at ${conn.baseUrl}`, () => docsPointers(conn));
    if (wantJson(values, io)) io.out(JSON.stringify(answer, null, 2));
    else io.out(renderDocsPointers(answer));
    if (answer.note && wantJson(values, io)) io.err(`note: ${answer.note}`);
    return EXIT.ok.code;
  }
  if (name === 'watch-action-intent') {
    const interval = Number(values['interval-ms'] ?? 2000);
    if (!Number.isInteger(interval) || interval < 500)
      throw new UsageError('--interval-ms must be an integer of at least 500.');
    return watchIntent(conn, io, positionals[0] as string, { json: wantJson(values, io), intervalMs: interval });
  }
  if (name === 'doctor') {
    const { renderDoctor, runDoctor } = await import('./doctor.ts');
    const { report, exitCode } = await runDoctor(conn, io);
    io.out(wantJson(values, io) ? JSON.stringify(report, null, 2) : renderDoctor(report));
    return exitCode;
  }
  throw new Error(`No helper named ${name}.`);
}

async function runOperator(def: OperatorCommand, values: OptionValues, args: string[], io: CliIO): Promise<number> {
  const key = def.command.join(' ');
  const print = (result: { json: unknown; text?: string; exitCode?: number }) => {
    io.out(wantJson(values, io) || result.text === undefined ? JSON.stringify(result.json, null, 2) : result.text);
    return result.exitCode ?? EXIT.ok.code;
  };
  // The command's handler module is loaded now, and no other.
  const handlers = await handlersFor(def);
  if (def.store === false) {
    const handler: StandaloneHandler | undefined = handlers.standalone[key];
    if (!handler) throw new Error(`No handler for ${key}.`);
    return print(await handler({ options: values, args, env: io.env, io }));
  }
  const handler: OperatorHandler | undefined = handlers.store[key];
  if (!handler) throw new Error(`No handler for ${key}.`);
  const env: Record<string, string | undefined> = { ...io.env, FLOWPORT_WORKER: 'off', FLOWPORT_LOG_LEVEL: 'silent' };
  if (typeof values['data-dir'] === 'string') env.FLOWPORT_DATA_DIR = values['data-dir'];
  // Loaded here so agent commands do not pay for the store.
  const { createRuntime } = await import('../runtime.ts');
  const runtime = await withProgress(io, 'Opening the local store', () => createRuntime(loadConfig(env)));
  try {
    // Awaited to the end: a handler may run for as long as it needs before the store closes.
    const result = await handler({ options: values, args, env: io.env, io, services: runtime.services });
    return print(result);
  } catch (err) {
    // JSON output gets the same problem object the API answers (code, detail, docs URL); the
    // one-line message on stderr and the exit code follow in runCli.
    if (err instanceof AppError && wantJson(values, io)) {
      const [{ toProblem }, { newId }] = await Promise.all([import('../errors/problem.ts'), import('../ids.ts')]);
      io.out(
        JSON.stringify(toProblem(err, { publicUrl: runtime.config.publicUrl, requestId: newId('request') }), null, 2),
      );
    }
    throw err;
  } finally {
    await runtime.close();
  }
}

if (import.meta.main) process.exitCode = await runCli(process.argv.slice(2), processIO());
