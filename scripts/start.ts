// `npm start`: build the docs site when it is missing or was built from other
// inputs (site-stamp.ts), then start the one Flowport process.
import { execFileSync, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { ENV, publicUrlFrom } from '../api/src/config.ts';
import { DIST_DIR } from './docs/lib/site-paths.ts';
import { siteIsFresh } from './docs/lib/site-stamp.ts';

const root = join(import.meta.dirname, '..');
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
// is swapped in whole when complete (scripts/docs/build-site.ts). Until then the previous
// complete site keeps serving; with none, /readyz's `site` check is false.
// Stale means built from other inputs. The origin is not an input: the server writes
// its public URL into the site's absolute links (llms.txt, twins) as it serves them.
// A FLOWPORT_SITE_DIR elsewhere is a site the operator built; it is served as is.
const servesBuiltSite = resolve(root, process.env[ENV.siteDir] ?? DIST_DIR) === DIST_DIR;
if (servesBuiltSite && !siteIsFresh()) {
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
    if (code === 0) console.log(`Docs site built: served at ${publicUrlFrom(process.env)}/`);
    else console.error(`The docs site failed to build (exit ${code}):\n${log.slice(-4000)}`);
  });
  process.on('exit', () => build.kill('SIGTERM'));
}

const { main } = await import('../api/src/main.ts');
await main();
