// `npm run bench:start`: how long `npm start` takes to serve everything with a built docs site
// (issue 31, goal 7: within 5 s, even when PORT or the public URL changed; the first
// `npm run build:site` under 40 s). Each round starts `npm start` on a new port with a new public
// URL (alternately http://localhost:<port> and http://127.0.0.1:<port>) against one data dir
// (migrated by an unmeasured first start), and times from spawn until all of these answer: the
// API health (/healthz), the docs home page (/), and /llms.txt naming the round's public URL
// (absolute URLs are written at request time, so no rebuild per origin). Rounds alternate with
// a baseline: a bare node:http server started with `node -e`, timed until it answers.
// Medians of BENCH_START_ROUNDS (default 5, at least 5). The machine's load average is printed
// at the start.
//   --build: time `npm run build:site` from an empty site/dist first (it also runs when no
//   fresh build exists; that is then the first build).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BARE_SERVER, median } from './lib/intake-load.ts';
import { loadLine } from './lib/proc-cpu.ts';
import { freePort } from './lib/bench-flowport.ts';
import { DIST_DIR } from './docs/lib/site-paths.ts';
import { siteIsFresh } from './docs/lib/site-stamp.ts';

const root = join(import.meta.dirname, '..');
const { values: args } = parseArgs({ options: { build: { type: 'boolean', default: false } } });
const ROUNDS = Math.max(5, Number(process.env.BENCH_START_ROUNDS ?? 5));
const START_GOAL_S = 5;
const BUILD_GOAL_S = 40;

/** Spawns `command` in its own process group (npm runs node under a shell), so stop() ends all of it. */
function start(
  command: string,
  argv: string[],
  env: Record<string, string>,
): { child: ChildProcess; stop(): Promise<void> } {
  const child = spawn(command, argv, { cwd: root, env: { ...process.env, ...env }, stdio: 'ignore', detached: true });
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        const t = setTimeout(() => {
          try {
            process.kill(-(child.pid as number), 'SIGKILL');
          } catch {
            // gone
          }
        }, 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        try {
          process.kill(-(child.pid as number), 'SIGTERM');
        } catch {
          resolve();
        }
      }),
  };
}

/** Polls every 20 ms until `ready()` holds; returns the seconds since `t0`. */
async function until(t0: number, child: ChildProcess, ready: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited early (code ${child.exitCode})`);
    try {
      if (await ready()) return (performance.now() - t0) / 1000;
    } catch {
      // not up yet
    }
    if (performance.now() - t0 > 120_000) throw new Error('not served within 120 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function flowportStart(dataDir: string, round: number): Promise<number> {
  const port = await freePort();
  const publicUrl = `http://${round % 2 ? '127.0.0.1' : 'localhost'}:${port}`;
  const t0 = performance.now();
  const fp = start('npm', ['start', '--silent'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    FLOWPORT_PUBLIC_URL: publicUrl,
    FLOWPORT_DATA_DIR: dataDir,
    FLOWPORT_LOG_LEVEL: 'silent',
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    const ok = async (path: string, check: (text: string) => boolean) => {
      const r = await fetch(`${base}${path}`);
      return r.status === 200 && check(await r.text());
    };
    const served = { health: false, home: false, llms: false };
    return await until(t0, fp.child, async () => {
      served.health ||= await ok('/healthz', () => true);
      served.home ||= await ok('/', (t) => /<html/i.test(t));
      served.llms ||= await ok('/llms.txt', (t) => t.includes(`${publicUrl}/`));
      return served.health && served.home && served.llms;
    });
  } finally {
    await fp.stop();
  }
}

async function bareStart(): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const bare = start(process.execPath, ['-e', BARE_SERVER], { PORT: String(port) });
  try {
    return await until(
      t0,
      bare.child,
      async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' })).status === 202,
    );
  } finally {
    await bare.stop();
  }
}

async function main(): Promise<void> {
  console.log(`bench:start — ${loadLine(availableParallelism())} at start.`);
  if (args.build || !siteIsFresh()) {
    rmSync(DIST_DIR, { recursive: true, force: true });
    const t0 = performance.now();
    const build = start('npm', ['run', '--silent', 'build:site'], {});
    const code = await new Promise<number | null>((r) => build.child.once('exit', r));
    const s = (performance.now() - t0) / 1000;
    if (code !== 0) throw new Error(`npm run build:site failed (exit ${code})`);
    console.log(
      `First build (npm run build:site, empty site/dist): ${s.toFixed(1)} s (goal < ${BUILD_GOAL_S} s: ${s < BUILD_GOAL_S ? 'met' : 'not met'})`,
    );
  }
  if (!siteIsFresh()) throw new Error('site/dist is not a fresh build after building it');
  const dataDir = mkdtempSync(join(tmpdir(), 'flowport-bench-start-'));
  try {
    const first = await flowportStart(dataDir, 0);
    console.log(`Unmeasured first start (fresh data dir: migrations, sandbox set-up): ${first.toFixed(2)} s`);
    const mine: number[] = [];
    const base: number[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      mine.push(await flowportStart(dataDir, r));
      base.push(await bareStart());
    }
    const m = median(mine);
    const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
    console.log(
      `npm start until /healthz, / and /llms.txt (with the round's public URL) all answer, new PORT and public URL each round: median ${m.toFixed(2)} s (rounds ${fmt(mine)}; goal <= ${START_GOAL_S} s: ${m <= START_GOAL_S ? 'met' : 'not met'})`,
    );
    console.log(
      `bare node:http server (node -e) until it answers: median ${median(base).toFixed(2)} s (rounds ${fmt(base)}); ratio ${(m / median(base)).toFixed(1)}x`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
