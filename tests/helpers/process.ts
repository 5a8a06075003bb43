// Child processes for tests that run Flowport the way an operator does: the project's
// Node, the repository as working directory, stdout and stderr collected together.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

export const REPO_ROOT = join(import.meta.dirname, '../..');
/** The project's pinned Node (the `node` devDependency), not the system one. */
export const PROJECT_NODE = join(REPO_ROOT, 'node_modules/.bin/node');

/** Collects a child's stdout and stderr, in arrival order, into `read()`. */
export function collectOutput(child: ChildProcess): { read(): string } {
  let out = '';
  const add = (d: Buffer | string) => {
    out += String(d);
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return { read: () => out };
}

/** Runs `node <args>` in the repository with extra env to its end; resolves with the exit code and output. */
export function runToEnd(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn(PROJECT_NODE, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collectOutput(child);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out: output.read() })));
}
