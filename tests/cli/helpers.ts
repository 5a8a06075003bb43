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
  /** Under a terminal: stdout as drawn, spinner frames included (`stdout` has them erased, as a terminal shows it). */
  drawn?: string;
}

/**
 * The progress spinner (api/src/cli/io.ts) draws `\r ESC[2K <frame> <label>` on stderr while a call
 * is slow and erases its line before anything else is printed. Under a pseudo-terminal stderr and
 * stdout share the stream, so how many frames land there depends on the machine's speed: remove
 * them (and the erasing) to get what the terminal finally shows.
 */
export function withoutSpinner(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the spinner's erase sequence starts with ESC.
  return text.replace(/\r\x1b\[2K(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] [^\r\n]*)?/g, '');
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
      const drawn = stdout.replace(/\r\n/g, '\n');
      const shown = options.tty ? withoutSpinner(drawn) : drawn;
      let json: unknown = null;
      try {
        json = JSON.parse(shown);
      } catch {}
      const run: Run = { args, code: code ?? -1, stdout: shown, stderr, json, ...(options.tty ? { drawn } : {}) };
      RUNS.push(run);
      resolve(run);
    });
  });
}

/** All output of the recorded runs, except the runs `except` allows (where a one-time secret is expected). */
export function outputsExcept(except: (run: Run) => boolean): string {
  return RUNS.filter((r) => !except(r))
    .map((r) => `${r.drawn ?? r.stdout}\n${r.stderr}`)
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
