// The CLI's connection to the outside: output streams, environment, terminal
// facts, and the progress indicator. Tests pass their own CliIO; bin/flowport.js
// passes the process's.

export interface CliIO {
  /** Writes one line (a newline is added) to stdout. */
  out(text: string): void;
  /** Writes one line (a newline is added) to stderr. */
  err(text: string): void;
  env: Record<string, string | undefined>;
  /** True when stdout is a terminal: readable text instead of JSON. */
  stdoutIsTTY?: boolean;
  /** True when stderr is a terminal: the progress indicator may draw there. */
  stderrIsTTY?: boolean;
  /** Terminal width, for tables. */
  columns?: number;
  /** Raw write to stderr (no newline), for redrawing the progress indicator. */
  errRaw?(text: string): void;
}

export function processIO(): CliIO {
  return {
    out: (t) => process.stdout.write(`${t}\n`),
    err: (t) => process.stderr.write(`${t}\n`),
    env: process.env,
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    columns: process.stdout.columns,
    errRaw: (t) => process.stderr.write(t),
  };
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Below this, nothing is drawn: a fast call should not flicker. */
const SHOW_AFTER_MS = 300;

/**
 * Runs `work` with a spinner and label on stderr (only when stderr is a
 * terminal), drawn once the work has taken longer than SHOW_AFTER_MS and
 * erased before anything else is printed.
 */
export async function withProgress<T>(io: CliIO, label: string, work: () => Promise<T>): Promise<T> {
  const raw = io.errRaw;
  if (!io.stderrIsTTY || !raw) return work();
  let frame = 0;
  let drawn = false;
  let interval: ReturnType<typeof setInterval> | undefined;
  const draw = () => {
    drawn = true;
    raw(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label}`);
  };
  const timer = setTimeout(() => {
    draw();
    interval = setInterval(draw, 80);
    interval.unref?.();
  }, SHOW_AFTER_MS);
  timer.unref?.();
  try {
    return await work();
  } finally {
    clearTimeout(timer);
    if (interval) clearInterval(interval);
    if (drawn) raw('\r\x1b[2K');
  }
}
