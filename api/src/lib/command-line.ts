// How an operation is typed on the command line. Kept free of imports so the
// manifest operation can use it without pulling the CLI into the registry.

/** The parts of an operation the command line needs. */
export interface CliAddressable {
  path: string;
  cli: readonly string[] | null;
}

/** Path parameters in the order they appear in the path template (they become positional arguments). */
export function pathParams(op: CliAddressable): string[] {
  return [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
}

/** `flowport preview-replay <event_id>`: the command an operation is reached by (manifest, docs, help). */
export function agentCommandLine(op: CliAddressable): string | null {
  if (!op.cli) return null;
  return ['flowport', ...op.cli, ...pathParams(op).map((p) => `<${p}>`)].join(' ');
}
