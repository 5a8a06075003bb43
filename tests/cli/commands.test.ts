// The command tree: agent commands are exactly the registry's operations, the
// three kinds never collide, every operator definition has its handler, exit
// codes are distinct, the reference page and shell completion derive from the
// same definitions. Runs the real binary where the behaviour is user-visible.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { agentCommands } from '../../api/src/cli/api-commands.ts';
import { agentCommandLine } from '../../api/src/lib/command-line.ts';
import { CONNECTION_OPTIONS, GLOBAL_OPTIONS, OPERATOR_COMMANDS, optionName } from '../../api/src/cli/definitions.ts';
import { EXIT_CODES } from '../../api/src/cli/exit-codes.ts';
import { allHandlers, handlersFor } from '../../api/src/cli/handlers.ts';
import { cliCommands, usageLine } from '../../api/src/cli/main.ts';
import { CLI_ENV } from '../../api/src/config.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import {
  cliGroups,
  cliReferenceSources,
  renderCliGroup,
  renderCliIndex,
} from '../../scripts/docs/lib/registry-pages.ts';
import { testZsh } from '../helpers/test-environment.ts';
import { cli, REPO } from './helpers.ts';

// `npm test` finds zsh or installs it (tests/helpers/test-environment.ts); where it cannot, the
// completion test is skipped and its name says why.
const ZSH = testZsh();

// The CLI runs in this process (cli()); `npx flowport` below and the end-to-end file run the binary.
// The completion tests start bash and zsh.
vi.setConfig({ testTimeout: 120_000 });

describe('the binary', () => {
  it('runs through `npx flowport` (package.json bin) on the project’s Node', () => {
    const out = execFileSync('npx', ['--no-install', 'flowport', '--version'], {
      cwd: REPO,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    expect(out.trim()).toMatch(/^flowport \d+\.\d+\.\d+$/);
  });
});

describe('agent commands = registry operations', () => {
  it('every list command pages with the one cursor: --cursor and --limit (its next page is the `More:` hint)', () => {
    const lists = agentCommands(OPERATIONS).filter((c) => c.words[0]?.startsWith('list-'));
    expect(lists.length).toBeGreaterThanOrEqual(7);
    for (const c of lists) {
      const names = c.options.map((o) => o.name);
      expect(names, c.words.join(' ')).toEqual(expect.arrayContaining(['cursor', 'limit']));
      expect(names, c.words.join(' ')).not.toContain('starting-after');
    }
  });
  it('every registry operation has CLI words, and the CLI lists exactly those operations', async () => {
    expect(OPERATIONS.filter((op) => op.cli === null).map((op) => op.operationId)).toEqual([]);
    const run = await cli(['--help', '--json']);
    expect(run.code).toBe(0);
    const agent = (run.json.commands as { kind: string; operation_id: string; command: string }[]).filter(
      (c) => c.kind === 'agent',
    );
    expect(agent.map((c) => c.operation_id).sort()).toEqual(OPERATIONS.map((op) => op.operationId).sort());
    for (const op of OPERATIONS) {
      const c = agent.find((x) => x.operation_id === op.operationId);
      expect(c?.command).toBe(op.cli?.join(' '));
    }
  });

  it('no two commands of any kind share their words', () => {
    const words = cliCommands().map((c) => c.words.join(' '));
    expect(new Set(words).size).toBe(words.length);
  });

  it('the issue’s command tree exists, with path parameters as positional arguments', () => {
    const usages = cliCommands().map(usageLine);
    for (const u of [
      'npx flowport get-manifest',
      'npx flowport get-grant',
      'npx flowport get-plan-usage',
      'npx flowport get-setup',
      'npx flowport list-endpoints',
      'npx flowport get-endpoint <endpoint_id>',
      'npx flowport list-events',
      'npx flowport get-event <event_id>',
      'npx flowport get-event-receipt <event_id>',
      'npx flowport get-diagnostics',
      'npx flowport list-audit',
      'npx flowport list-action-intents',
      'npx flowport get-action-intent <intent_id>',
      'npx flowport confirm-action-intent <intent_id>',
      'npx flowport cancel-action-intent <intent_id>',
      'npx flowport preview-replay <event_id>',
      'npx flowport preview-diagnostics-share',
      'npx flowport preview-endpoint-edit <endpoint_id>',
      'npx flowport preview-secret-rotate <endpoint_id>',
      'npx flowport preview-endpoint-delete <endpoint_id>',
      'npx flowport preview-test-event <endpoint_id>',
      'npx flowport docs',
      'npx flowport doctor',
      'npx flowport completion <shell>',
      'npx flowport sandbox',
      'npx flowport shops list',
      'npx flowport shops create',
      'npx flowport endpoints create',
      'npx flowport grants create',
      'npx flowport grants list',
      'npx flowport grants revoke',
      'npx flowport audit verify',
    ])
      expect(usages).toContain(u);
  });

  it('derived options are unique per command, never shadow shared ones, and confirm takes an idempotency key', () => {
    const shared = new Set([...CONNECTION_OPTIONS, ...GLOBAL_OPTIONS].map(optionName));
    for (const cmd of agentCommands(OPERATIONS)) {
      const names = cmd.options.map((o) => o.name);
      expect(new Set(names).size, cmd.op.operationId).toBe(names.length);
      for (const n of names) expect(shared.has(n), `${cmd.op.operationId} --${n}`).toBe(false);
      expect(cmd.args.map((a) => `<${a.name}>`).join(' ')).toBe(
        (agentCommandLine(cmd.op) ?? '')
          .split(' ')
          .filter((w) => w.startsWith('<'))
          .join(' '),
      );
    }
    const confirm = agentCommands(OPERATIONS).find((c) => c.op.operationId === 'confirmActionIntent');
    expect(confirm?.options.find((o) => o.name === 'idempotency-key')).toMatchObject({
      location: 'header',
      required: false,
    });
    const replay = agentCommands(OPERATIONS).find((c) => c.op.operationId === 'previewReplay');
    expect(replay?.options.find((o) => o.name === 'acknowledge-recent-delivery')?.kind).toBe('boolean');
  });
});

describe('operator and helper commands', () => {
  it('every operator definition has exactly one handler of the right kind, and every handler a definition', async () => {
    const { store: OPERATOR_HANDLERS, standalone: STANDALONE_HANDLERS } = await allHandlers();
    for (const def of OPERATOR_COMMANDS) {
      const key = def.command.join(' ');
      // The module loaded for the command (the only one loaded when it runs) has its handler.
      const own = await handlersFor(def);
      expect(def.store === false ? own.standalone[key] : own.store[key], key).toBeTypeOf('function');
      if (def.store === false) {
        expect(STANDALONE_HANDLERS[key], key).toBeTypeOf('function');
        expect(OPERATOR_HANDLERS[key], key).toBeUndefined();
      } else {
        expect(OPERATOR_HANDLERS[key], key).toBeTypeOf('function');
        expect(STANDALONE_HANDLERS[key], key).toBeUndefined();
      }
    }
    const defined = new Set(OPERATOR_COMMANDS.map((d) => d.command.join(' ')));
    for (const key of [...Object.keys(OPERATOR_HANDLERS), ...Object.keys(STANDALONE_HANDLERS)])
      expect(defined.has(key), key).toBe(true);
  });

  it('help keeps agent, helper and operator commands apart', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    const out = run.stdout;
    const agentAt = out.indexOf('Agent commands');
    const helperAt = out.indexOf('Helper commands');
    const operatorAt = out.indexOf('Operator commands');
    expect(agentAt).toBeGreaterThan(-1);
    expect(helperAt).toBeGreaterThan(agentAt);
    expect(operatorAt).toBeGreaterThan(helperAt);
    // A command's line: four spaces, its usage, at least two spaces, its summary.
    const lineAt = (usage: string) => out.search(new RegExp(`\n    ${usage.replace(/^npx flowport /, '')} {2,}\\S`));
    for (const op of OPERATIONS) {
      const at = lineAt(agentCommandLine(op) ?? '');
      expect(at, op.operationId).toBeGreaterThan(agentAt);
      expect(at, op.operationId).toBeLessThan(helperAt);
    }
    for (const c of cliCommands().filter((x) => x.kind === 'helper')) {
      const at = lineAt(usageLine(c));
      expect(at, usageLine(c)).toBeGreaterThan(helperAt);
      expect(at, usageLine(c)).toBeLessThan(operatorAt);
    }
    for (const c of cliCommands().filter((x) => x.kind === 'operator'))
      expect(lineAt(usageLine(c)), usageLine(c)).toBeGreaterThan(operatorAt);
    expect(out).toContain(CLI_ENV.baseUrl);
    expect(out).toContain(CLI_ENV.token);
  });

  it('no command line takes a token: --token is refused without echoing its value', async () => {
    const run = await cli(['get-grant', '--token=fpg_shouldnotappear']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(CLI_ENV.token);
    expect(run.stderr).toContain('--token-file');
    expect(`${run.stdout}${run.stderr}`).not.toContain('fpg_shouldnotappear');
    for (const c of cliCommands({ withAgentOptions: true }))
      for (const o of [...c.options, ...c.sharedOptions]) expect(optionName(o)).not.toBe('token');
  });

  it('usage errors exit 2 with a pointer to help', async () => {
    const missing = await cli(['get-event']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('Missing <event_id>');
    const unknown = await cli(['list-events', '--nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown option --nope.');
    // The same sentence as the API's unknown_field, with the option it probably meant.
    const near = await cli(['list-events', '--endpointid', 'ep_x']);
    expect(near.code).toBe(2);
    expect(near.stderr).toContain('Unknown option --endpointid. Did you mean --endpoint-id?');
    const typo = await cli(['list-evnts']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean `list-events`');
    const sub = await cli(['intents', 'approve', 'int_x']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain('confirm-action-intent');
    // A command renamed by the naming rule (ADR 1000) names its new spelling.
    const renamed = await cli(['events', 'list']);
    expect(renamed.code).toBe(2);
    expect(renamed.stderr).toContain('`flowport events list` is now `npx flowport list-events`');
    const none = await cli([]);
    expect(none.code).toBe(2);
    const badNumber = await cli(['preview-diagnostics-share', '--expires-in-hours', 'soon']);
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toContain('takes a number');
    const badJson = await cli(['preview-replay', 'evt_x', '--payload-override', '{oops']);
    expect(badJson.code).toBe(2);
    const group = await cli(['endpoints', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('npx flowport endpoints import-secret');
    expect(group.stdout).toMatch(/npx flowport endpoints create\s+.*\(operator\)/);
    const help = await cli(['preview-replay', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: npx flowport preview-replay <event_id>');
    expect(help.stdout).toContain('--acknowledge-recent-delivery');
    expect(help.stdout).toContain('replay:preview');
  });

  it('exit codes are distinct and each kind the issue names exists', () => {
    const codes = EXIT_CODES.map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    const names = EXIT_CODES.map((e) => e.name);
    for (const n of ['ok', 'usage', 'auth', 'refusal', 'not_found', 'server_error']) expect(names).toContain(n);
  });
});

describe('reference page and completion', () => {
  it('/reference/cli/ and its command-group pages are generated from the command definitions and the exit-code list', () => {
    const sources = cliReferenceSources();
    const { commands } = sources;
    const index = renderCliIndex(sources);
    const groups = cliGroups(sources);
    // Every command is on exactly one group page, with its options; table cells escape pipes (`<a|b>` choices).
    expect(groups.flatMap((g) => g.commands).length).toBe(commands.length);
    for (const g of groups) {
      const page = renderCliGroup(g, sources);
      for (const c of g.commands) {
        expect(page).toContain(`## \`${usageLine(c)}\`\n`);
        expect(index).toContain(`[\`${usageLine(c)}\`](/reference/cli/${g.slug}/)`);
        for (const o of c.options)
          expect(page, `${usageLine(c)} ${o.flag}`).toContain(`\`${o.flag.replace(/\|/g, '\\|')}\``);
      }
    }
    for (const e of EXIT_CODES) expect(index).toContain(`| \`${e.code}\` | \`${e.name}\` |`);
    expect(index).toContain(`\`${CLI_ENV.baseUrl}\``);
    expect(index).toContain(`\`${CLI_ENV.token}\``);
    // Agent command groups first, then helper, then operator commands.
    const kinds = groups.map((g) => g.commands[0]?.kind);
    expect(kinds.slice(-2)).toEqual(['helper', 'operator']);
    expect(new Set(kinds.slice(0, -2))).toEqual(new Set(['agent']));
  });

  it('the bash completion script completes commands, subcommands, options and option values', async () => {
    const script = await cli(['completion', 'bash']);
    expect(script.code).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), 'flowport-completion-'));
    const file = join(dir, 'flowport.bash');
    writeFileSync(file, script.stdout);
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _flowport; printf '%s\\n' "\${COMPREPLY[@]}"`,
          file,
          'flowport',
          ...words,
        ],
        { encoding: 'utf8' },
      )
        .split('\n')
        .filter(Boolean)
        .sort();
    expect(complete('get-ev')).toEqual(['get-event', 'get-event-receipt']);
    expect(complete('list-')).toEqual([
      'list-action-intents',
      'list-alert-subscriptions',
      'list-audit',
      'list-bulk-replay-items',
      'list-endpoints',
      'list-events',
      'list-flow-readiness-history',
      'list-incidents',
      'list-receipts',
    ]);
    expect(complete('endpoints', '')).toEqual(['create', 'import-secret']);
    expect(complete('preview-replay', 'evt_1', '--ack')).toEqual([
      '--acknowledge-recent-delivery',
      '--acknowledge-recovered',
    ]);
    expect(complete('confirm-action-intent', 'int_1', '--idem')).toEqual(['--idempotency-key']);
    expect(complete('grants', 'create', '--tier', '')).toEqual(
      ['admin_assistant', 'observer', 'operator', 'recovery_operator'].sort(),
    );
    expect(complete('completion', '')).toEqual(['bash', 'zsh']);
    expect(complete('')).toContain('doctor');
    expect(complete('')).toContain('grants');
  });

  it.runIf('path' in ZSH)(
    `the zsh script loads after compinit and offers the same candidates, in real zsh${'why' in ZSH ? ` (skipped: ${ZSH.why})` : ''}`,
    async () => {
      if (!('path' in ZSH)) throw new Error(ZSH.why);
      const zsh = await cli(['completion', 'zsh']);
      expect(zsh.code).toBe(0);
      const dir = mkdtempSync(join(tmpdir(), 'flowport-completion-'));
      const file = join(dir, 'flowport.zsh');
      writeFileSync(file, zsh.stdout);
      // The script runs in zsh as a user loads it (compinit, then source). compadd only works
      // inside a completion widget, so it is replaced by a function that prints what it was given;
      // zsh itself then filters those by the typed prefix.
      const complete = (...words: string[]) =>
        execFileSync(
          ZSH.path,
          [
            '-fc',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh code, expanded by zsh.
            'autoload -U compinit; compinit -u -D; source "$0"; compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }; words=(flowport "$@"); CURRENT=${#words}; _flowport',
            file,
            ...words,
          ],
          { encoding: 'utf8' },
        )
          .split('\n')
          .filter(Boolean)
          .sort();
      expect(complete('endpoints', '')).toEqual(['create', 'import-secret']);
      expect(complete('preview-replay', 'evt_1', '--ack')).toContain('--acknowledge-recent-delivery');
      expect(complete('grants', 'create', '--tier', '')).toEqual(
        ['admin_assistant', 'observer', 'operator', 'recovery_operator'].sort(),
      );
      expect(complete('completion', '')).toEqual(['bash', 'zsh']);
      expect(complete('')).toContain('doctor');
      expect(complete('')).toContain('grants');
    },
  );
});
