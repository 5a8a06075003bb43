// Runs the real `flowport` binary (bin/flowport.js on the project's Node) as a
// child process, optionally under a pseudo-terminal (`script`), and keeps every
// output so a test can scan all of it for secrets.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { runCli } from '../../api/src/cli/main.ts';
import { TEST_COMPILE_CACHE } from '../helpers/test-environment.ts';

export const REPO = join(import.meta.dirname, '..', '..');
export const NODE = join(REPO, 'node_modules', '.bin', 'node');
export const BIN = join(REPO, 'bin', 'flowport.js');

export interface Run {
  args: string[];
  code: number;
  stdout: string;
  stderr: string;
  /** Parsed stdout when it is JSON. */
  json: any;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  /** Run under a pseudo-terminal: stdout and stderr are a terminal (and arrive merged in `stdout`). */
  tty?: boolean;
  cwd?: string;
}

/** Every run of this test process, for the secret scan. */
export const RUNS: Run[] = [];

/** Only what the CLI needs: no FLOWPORT_* leaks in from the developer's shell. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  // Node's compile cache: a CLI start takes about a third of the time once the modules are cached.
  env.NODE_COMPILE_CACHE = process.env.NODE_COMPILE_CACHE || TEST_COMPILE_CACHE;
  return env;
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Spinner frames drawn by withProgress (api/src/cli/io.ts), then the erase that ends them. */
const ERASE = '\r\x1b[2K';
const SPINNER_ERASED = new RegExp(`(${literal(ERASE)}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [^\\r\\n]*)+${literal(ERASE)}`, 'g');

function literal(text: string): string {
  return text.replace(/[[\]\\^$.|?*+(){}]/g, '\\$&');
}

/** What a terminal finally shows of `text`: the spinner frames withProgress drew and erased are gone. */
export function withoutSpinner(text: string): string {
  return text.replace(SPINNER_ERASED, '');
}

export function flowport(args: string[], options: RunOptions = {}): Promise<Run> {
  const env: Record<string, string> = { ...baseEnv() };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  const [cmd, argv] = options.tty
    ? // `script -e` returns the child's exit code; stty gives the terminal a width.
      ['script', ['-qec', `stty cols 160 2>/dev/null; ${[NODE, BIN, ...args].map(quote).join(' ')}`, '/dev/null']]
    : [NODE, [BIN, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd as string, argv as string[], {
      cwd: options.cwd ?? REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown = null;
      try {
        json = JSON.parse(stdout);
      } catch {}
      // On a terminal a slow request draws a progress spinner (stderr, same screen) and erases it
      // before the answer; a busy machine decides whether it shows. A spinner that was erased
      // is not part of what the reader sees, so it is dropped; one left on screen stays.
      const screen = options.tty ? stdout.replace(SPINNER_ERASED, '') : stdout;
      const run = { args, code: code ?? -1, stdout: screen.replace(/\r\n/g, '\n'), stderr, json };
      RUNS.push(run);
      resolve(run);
    });
  });
}

/** All output of the recorded runs, except the runs `except` allows (where a one-time secret is expected). */
export function outputsExcept(except: (run: Run) => boolean): string {
  return RUNS.filter((r) => !except(r))
    .map((r) => `${r.stdout}\n${r.stderr}`)
    .join('\n');
}

/**
 * The same CLI run in this process (runCli with its own IO), for the many checks whose point is
 * what a command does and prints, not the process around it: no Node start per check. `tty`
 * makes stdout and stderr terminals (readable text; the spinner is not drawn: errRaw is absent);
 * as under `script`, both land in `stdout`. A process per command family stays in the
 * end-to-end file (the binary's exit codes, a real pseudo-terminal).
 */
export async function cli(args: string[], options: RunOptions = {}): Promise<Run> {
  const env: Record<string, string | undefined> = { ...baseEnv() };
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined) env[k] = v;
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    out: (t) => {
      stdout += `${t}\n`;
    },
    err: (t) => {
      if (options.tty) stdout += `${t}\n`;
      else stderr += `${t}\n`;
    },
    env,
    stdoutIsTTY: options.tty === true,
    stderrIsTTY: options.tty === true,
    columns: options.tty ? 160 : undefined,
  });
  let json: unknown = null;
  try {
    json = JSON.parse(stdout);
  } catch {}
  const run: Run = { args, code, stdout, stderr, json };
  RUNS.push(run);
  return run;
}
