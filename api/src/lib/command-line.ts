// How a command is typed on the command line. Kept to one import-free module (../entry-points.ts,
// where the invocation a checkout runs is said) so the manifest operation can use it without
// pulling the CLI into the registry.
import { commandLine } from '../entry-points.ts';

export { CLI_INVOCATION, commandLine } from '../entry-points.ts';

/** The parts of an operation the command line needs. */
export interface CliAddressable {
  path: string;
  cli: readonly string[] | null;
}

/** Path parameters in the order they appear in the path template (they become positional arguments). */
export function pathParams(op: CliAddressable): string[] {
  return [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
}

/** `preview-replay <event_id>`: an operation's command words and arguments, without the invocation. */
export function agentCommandWords(op: CliAddressable): string | null {
  if (!op.cli) return null;
  return [...op.cli, ...pathParams(op).map((p) => `<${p}>`)].join(' ');
}

/** `npx flowport preview-replay <event_id>`: the command an operation is reached by (manifest, docs, help). */
export function agentCommandLine(op: CliAddressable): string | null {
  const words = agentCommandWords(op);
  return words === null ? null : commandLine(words);
}
