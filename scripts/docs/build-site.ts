// `npm run build:site`: assemble content and generated pages, build the Astro
// site into site/dist (offline, telemetry off), then run the public-safety
// scan over content/, openapi/ and the built site. Fails on any problem.
// `--if-stale` skips the build when site/dist matches the current inputs.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from './generate.ts';
import { formatFindings, scanPaths } from './public-safety-scan.ts';
import { siteInputsHash, siteIsFresh, STAMP_FILE } from './lib/site-stamp.ts';
import { REPO_ROOT, SITE_ROOT } from './lib/site-paths.ts';

/** Vite's built-in `import.meta.env` names; vitest also sets them in process.env (DEV=1, MODE=test…). */
const VITE_BUILTIN_ENV = ['DEV', 'PROD', 'MODE', 'SSR', 'BASE_URL'];

/**
 * The environment astro build runs in: a production build whatever the caller's environment.
 * Inherited DEV=1 (vitest sets it, and the site tests rebuild under vitest) or NODE_ENV=development
 * made a dev-mode build, whose search dialog only says "Search is only available in production builds".
 */
export function astroBuildEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, NODE_ENV: 'production', ASTRO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
  for (const name of VITE_BUILTIN_ENV) delete out[name];
  return out;
}

export function buildSite(options: { ifStale?: boolean; quiet?: boolean } = {}): void {
  if (options.ifStale && siteIsFresh()) {
    if (!options.quiet) console.log('docs: site/dist is up to date');
    return;
  }
  const started = Date.now();
  const inputs = siteInputsHash();
  const gen = generate();
  console.log(
    `docs: assembled ${gen.pages.length} pages (${gen.operations} operations, ${gen.errorCodes} error codes)`,
  );

  // The pinned Node (the npm `node` devDependency): Astro needs >= 22.12 even when
  // the caller (e.g. a test runner started by a system Node) is older.
  const pinnedNode = join(REPO_ROOT, 'node_modules/.bin/node');
  const astro = spawnSync(
    existsSync(pinnedNode) ? pinnedNode : process.execPath,
    [join(REPO_ROOT, 'node_modules/astro/bin/astro.mjs'), 'build', '--silent'],
    {
      cwd: SITE_ROOT,
      stdio: 'inherit',
      env: astroBuildEnv(process.env),
    },
  );
  if (astro.status !== 0) throw new Error(`astro build failed (exit ${astro.status ?? astro.signal})`);

  const findings = scanPaths(['content', 'openapi', 'site/dist'].map((p) => join(REPO_ROOT, p)));
  if (findings.length > 0) {
    throw new Error(
      `public-safety scan failed: the docs would publish something that looks like a secret or private data.\n${formatFindings(findings)}`,
    );
  }
  writeFileSync(STAMP_FILE, `${JSON.stringify({ inputs }, null, 2)}\n`);
  console.log(`docs: built site/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.main) {
  try {
    buildSite({ ifStale: process.argv.includes('--if-stale') });
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
