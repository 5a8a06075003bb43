// `npm run test:under-load`: `npm test` while a CPU hog keeps one core busy, as on a shared or
// busy machine. The hog is a child process spinning in a loop; it is started before the run and
// stopped after it (also on failure, Ctrl-C or SIGTERM). Exits with the test run's status.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
console.log(`=== CPU hog started (pid ${hog.pid}): one core busy for the whole run`);

let run: ChildProcess | null = null;
function stopHog(): void {
  if (hog.exitCode === null && hog.signalCode === null) hog.kill('SIGKILL');
}
// A stop reaches `npm test`'s whole process group (it then cleans up what it started) and the hog.
let stoppedBy: number | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stoppedBy = signal === 'SIGINT' ? 130 : 143;
    stopHog();
    if (run?.pid) {
      try {
        process.kill(-run.pid, signal);
      } catch {
        // already gone
      }
    }
  });
}

const started = Date.now();
const code = await new Promise<number>((resolve) => {
  run = spawn('npm', ['test'], { cwd: root, stdio: 'inherit', detached: true });
  run.on('error', () => resolve(1));
  run.on('close', (c) => resolve(c ?? 1));
});
stopHog();
console.log(
  `=== npm test under load: ${code === 0 ? 'ok' : 'FAILED'} (${((Date.now() - started) / 1000).toFixed(1)} s); CPU hog stopped`,
);
process.exit(stoppedBy ?? code);
