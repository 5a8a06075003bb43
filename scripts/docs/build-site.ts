// `npm run build:site`: assemble content and generated pages, build the Astro site, run the
// public-safety scan over content/, openapi/ and the built site, and only then put it in place.
// Fails on any problem.
//
// Atomic (docs/adr/0011): the site is built in a folder of its own beside the site directory
// (site/dist, or `--out-dir <dir>`), the stamp (api/src/docs-paths.ts) written into it last, and
// the folder is swapped in whole by renames. The site directory only ever holds a complete build:
// the previous one keeps serving while this one builds, and a build killed at any point leaves it
// as it was (or none). `--if-stale` skips the build when the site matches the current inputs.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { SEARCH_INDEX_FILE } from '../../api/src/lib/docs-search.ts';
import { buildDocsSearchIndex, readDocsPages } from '../../api/src/services/docs.ts';
import { generate } from './generate.ts';
import { formatFindings, scanPaths } from './public-safety-scan.ts';
import { siteInputsHash, siteIsFresh, writeStamp } from './lib/site-stamp.ts';
import { buildScratch, DIST_DIR, REPO_ROOT, SITE_ROOT, scratchOwner } from './lib/site-paths.ts';

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

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Clears what builds that did not finish left beside `siteDir`; a build still running keeps its
 * folders. A build killed between its two renames left no site directory and the previous site
 * swapped out: that one is put back.
 */
function clearScratch(siteDir: string): void {
  const parent = dirname(siteDir);
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent)) {
    const owner = scratchOwner(siteDir, name);
    if (!owner || (owner.pid !== process.pid && running(owner.pid))) continue;
    if (owner.previous && !existsSync(siteDir)) renameSync(join(parent, name), siteDir);
    else rmSync(join(parent, name), { recursive: true, force: true });
  }
}

/** Puts the finished build in place of the site directory: two renames, then the old site goes. */
function swapIn(building: string, siteDir: string, previous: string): void {
  let hadPrevious = true;
  try {
    renameSync(siteDir, previous);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    hadPrevious = false;
  }
  try {
    renameSync(building, siteDir);
  } catch (err) {
    if (hadPrevious) renameSync(previous, siteDir);
    throw err;
  }
  if (hadPrevious) rmSync(previous, { recursive: true, force: true });
}

/** Where Astro builds when the out-dir is on another filesystem (a build also writes site/'s content: one at a time). */
const ASTRO_OUT = 'cross-device-out';

export function buildSite(options: { ifStale?: boolean; quiet?: boolean; outDir?: string } = {}): void {
  const siteDir = resolve(options.outDir ?? DIST_DIR);
  const shown = relative(REPO_ROOT, siteDir).startsWith('..') ? siteDir : relative(REPO_ROOT, siteDir);
  if (options.ifStale && siteIsFresh(siteDir)) {
    if (!options.quiet) console.log(`docs: ${shown} is up to date`);
    return;
  }
  const started = Date.now();
  clearScratch(siteDir);
  const { building, previous } = buildScratch(siteDir);
  mkdirSync(dirname(siteDir), { recursive: true });
  // Astro moves pre-rendered assets into its output by rename, from a folder under site/ when the
  // output lies outside it: an out-dir on another filesystem (a tmpfs, another disk) fails with
  // EXDEV. There Astro builds on site/'s filesystem and the finished build is copied beside the
  // out-dir, where the swap below stays one rename.
  const astroOut =
    statSync(SITE_ROOT).dev === statSync(dirname(siteDir)).dev ? building : join(SITE_ROOT, '.astro', ASTRO_OUT);
  rmSync(join(SITE_ROOT, '.astro', ASTRO_OUT), { recursive: true, force: true });
  const inputs = siteInputsHash();
  const gen = generate();
  console.log(
    `docs: assembled ${gen.pages.length} pages (${gen.operations} operations, ${gen.errorCodes} error codes)`,
  );

  try {
    // The pinned Node (the npm `node` devDependency): Astro needs >= 22.12 even when
    // the caller (e.g. a test runner started by a system Node) is older.
    const pinnedNode = join(REPO_ROOT, 'node_modules/.bin/node');
    const astro = spawnSync(
      existsSync(pinnedNode) ? pinnedNode : process.execPath,
      [join(REPO_ROOT, 'node_modules/astro/bin/astro.mjs'), 'build', '--silent', '--outDir', astroOut],
      {
        cwd: SITE_ROOT,
        stdio: 'inherit',
        env: astroBuildEnv(process.env),
      },
    );
    if (astro.status !== 0) throw new Error(`astro build failed (exit ${astro.status ?? astro.signal})`);
    if (astroOut !== building) cpSync(astroOut, building, { recursive: true });
    // The docs search index, over the twins just built: the site's search dialog and the agents'
    // search (GET /agent/v1/docs/search, MCP search_docs) both read this one file.
    const index = buildDocsSearchIndex(readDocsPages(building));
    writeFileSync(join(building, SEARCH_INDEX_FILE), JSON.stringify(index));

    const findings = scanPaths([join(REPO_ROOT, 'content'), join(REPO_ROOT, 'openapi'), building]);
    if (findings.length > 0) {
      throw new Error(
        `public-safety scan failed: the docs would publish something that looks like a secret or private data.\n${formatFindings(findings)}`,
      );
    }
    writeStamp(building, inputs);
    swapIn(building, siteDir, previous);
  } finally {
    rmSync(building, { recursive: true, force: true });
    if (astroOut !== building) rmSync(astroOut, { recursive: true, force: true });
  }
  console.log(`docs: built ${shown} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out-dir');
  try {
    if (outAt >= 0 && !args[outAt + 1]) throw new Error('--out-dir needs the directory to build the site in');
    buildSite({ ifStale: args.includes('--if-stale'), outDir: outAt >= 0 ? args[outAt + 1] : undefined });
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
