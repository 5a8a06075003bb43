// The commands a refusal prints (issue 43, item 6): the command just run with the option that
// fixes it, and the command of an operation the catalog says to call, with the arguments this run
// already has filled in (`npx flowport get-event evt_…`). Both are printed as a checkout runs them.
import { commandLine, pathParams } from '../lib/command-line.ts';
import { type AgentCommand, agentCommandById } from './agent-table.ts';
import type { OptionValues } from './handlers.ts';
import type { ProblemContext } from './output.ts';

/** Options never echoed back in a printed command (they may hold a secret). */
const NEVER_ECHOED = /secret|token|password|credential/;

function quoted(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** What `cmd` run with `positionals` and `values` lets a refusal print. */
export function refusalContext(cmd: AgentCommand, positionals: string[], values: OptionValues): ProblemContext {
  const args = Object.fromEntries(cmd.args.map((a, i) => [a.name, positionals[i] as string]));
  return {
    rerun(option) {
      const name = (option.split(' ')[0] as string).replace(/^--/, '');
      if (!cmd.options.some((o) => o.name === name)) return null;
      const typed: string[] = [];
      for (const o of cmd.options) {
        const v = values[o.name];
        if (v === undefined || o.name === name || o.location === 'header' || NEVER_ECHOED.test(o.name)) continue;
        for (const one of Array.isArray(v) ? v : [v])
          typed.push(one === true ? `--${o.name}` : `--${o.name} ${quoted(String(one))}`);
      }
      return commandLine(...cmd.words, ...positionals.map(quoted), ...typed, option);
    },
    command(operationId) {
      let other: AgentCommand;
      try {
        other = agentCommandById(operationId);
      } catch {
        return null;
      }
      const filled = pathParams(other.op).map((p) => (args[p] ? quoted(args[p]) : `<${p}>`));
      return commandLine(...other.words, ...filled);
    },
  };
}
