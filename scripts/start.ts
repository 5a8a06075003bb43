// `npm start`: build the docs site when it is missing or older than its sources,
// then start the one Flowport process.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const SITE_INPUTS = [
  'content',
  'site',
  'openapi',
  'api/src/errors',
  'api/src/auth/scopes.ts',
  'api/src/plans.ts',
  'api/src/operations',
  'api/src/cli/definitions.ts',
  'api/src/docs-paths.ts',
];
const SITE_MARKER = join(root, 'site/dist/index.html');

function newestMtime(path: string): number {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'dist' || entry === 'node_modules' || entry === '.astro') continue;
    max = Math.max(max, newestMtime(join(path, entry)));
  }
  return max;
}

export function siteIsStale(): boolean {
  if (!existsSync(SITE_MARKER)) return true;
  const built = statSync(SITE_MARKER).mtimeMs;
  return SITE_INPUTS.some((p) => newestMtime(join(root, p)) > built);
}

if (!process.env.FLOWPORT_BUILD_COMMIT) {
  try {
    process.env.FLOWPORT_BUILD_COMMIT = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
  } catch {
    process.env.FLOWPORT_BUILD_COMMIT = 'unknown';
  }
}

// The API comes up at once; a missing or stale docs site builds beside it and
// is served as soon as it is written (/readyz reports `site` until then).
if (siteIsStale()) {
  console.log('Building the docs site in the background (missing or stale)…');
  const build = spawn('npm', ['run', '--silent', 'build:site'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  build.stdout?.on('data', (d) => {
    log += d;
  });
  build.stderr?.on('data', (d) => {
    log += d;
  });
  build.on('exit', (code) => {
    if (code === 0) console.log('Docs site built and served at /.');
    else console.error(`The docs site failed to build (exit ${code}):\n${log.slice(-4000)}`);
  });
  process.on('exit', () => build.kill('SIGTERM'));
}

const { main } = await import('../api/src/main.ts');
await main();
