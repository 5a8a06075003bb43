// The docs build is atomic (issue 40, point 9; ADR 0011): `npm run build:site` builds beside the
// site directory and swaps the finished site in whole, its stamp written last. Killed at any point,
// it leaves the previous complete site (or none, and /readyz not ready), never part of one, and a
// rebuild keeps the old site answering until the new one replaces it. Real builds (the pinned
// Node, Astro) into a temporary site directory, served by the real server on loopback.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SITE_STAMP_FILE } from '../../api/src/docs-paths.ts';
import { startTestServer, type TestServer, tempDir } from '../helpers/runtime.ts';
import { REPO_ROOT, withBuildLock } from './helpers/site.ts';

const NODE = join(REPO_ROOT, 'node_modules/.bin/node');
/** A refusal's docs URL: what the issue saw answer 404 from a partial site. */
const DOCS_URL = '/reference/errors/route_not_found/';

const builds: ChildProcess[] = [];

function startBuild(outDir: string): { child: ChildProcess; exited: Promise<number | null>; log: () => string } {
  // Its own process group, so a kill takes Astro (its child) down with it, as a crash would.
  const child = spawn(NODE, ['scripts/docs/build-site.ts', '--out-dir', outDir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  builds.push(child);
  let log = '';
  child.stdout?.on('data', (d) => {
    log += d;
  });
  child.stderr?.on('data', (d) => {
    log += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, log: () => log };
}

/** kill -9 of the build and everything it started. */
async function killBuild(build: ReturnType<typeof startBuild>): Promise<void> {
  process.kill(-(build.child.pid as number), 'SIGKILL');
  await build.exited;
}

/** What the server says about its docs: /readyz's `site` check and a docs page's status. */
async function probe(s: TestServer): Promise<{ site: boolean; page: number }> {
  const ready = (await (await fetch(`${s.url}/readyz`)).json()) as { checks: { site: boolean } };
  const page = await fetch(`${s.url}${DOCS_URL}`);
  await page.arrayBuffer();
  return { site: ready.checks.site, page: page.status };
}

/** Waits, probing the server all along, until `done` holds; returns every probe made. */
async function probeUntil(s: TestServer, done: () => boolean, what: string, limitMs = 300_000) {
  const seen: { site: boolean; page: number }[] = [];
  const until = Date.now() + limitMs;
  while (!done()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    seen.push(await probe(s));
    await new Promise((r) => setTimeout(r, 100));
  }
  return seen;
}

/** The build's own folder beside the site directory, once it holds a page (the build is mid-way). */
function midBuild(parent: string, siteName: string): boolean {
  return readdirSync(parent)
    .filter((n) => n !== siteName)
    .some((n) => existsSync(join(parent, n, 'index.html')));
}

describe('an interrupted or running build never serves part of a site', () => {
  // On site/'s filesystem, as site/dist is: there Astro writes into the build's own folder, which
  // the test watches to kill a build mid-way (an out-dir on another filesystem is built under site/
  // and copied beside it; scripts/docs/build-site.ts).
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  const parent = mkdtempSync(join(REPO_ROOT, '.tmp', 'flowport-site-build-'));
  const siteDir = join(parent, 'dist');
  let server: TestServer;
  let unlock: () => void;

  beforeAll(async () => {
    // Builds write the assembled content under site/ (generate.ts): one build at a time.
    unlock = await withBuildLock();
    server = await startTestServer({
      worker: false,
      bootstrapSandbox: false,
      store: 'sqlite',
      env: { FLOWPORT_SITE_DIR: siteDir },
    });
  });
  afterAll(async () => {
    for (const b of builds)
      if (b.exitCode === null && b.signalCode === null) process.kill(-(b.pid as number), 'SIGKILL');
    await server?.close();
    unlock?.();
    rmSync(parent, { recursive: true, force: true });
  });

  it('a first build killed mid-way leaves no site and not ready; the next complete one is served whole', async () => {
    expect(await probe(server)).toEqual({ site: false, page: 503 });

    const killed = startBuild(siteDir);
    const during = await probeUntil(
      server,
      () => midBuild(parent, 'dist') || killed.child.exitCode !== null,
      'the first build to write pages',
    );
    expect(killed.child.exitCode, killed.log()).toBeNull();
    await killBuild(killed);
    // Not ready, and the docs answer "not built yet", not a 404 from a partial site.
    expect(during.every((p) => !p.site && p.page === 503)).toBe(true);
    expect(existsSync(join(siteDir, 'index.html'))).toBe(false);
    expect(await probe(server)).toEqual({ site: false, page: 503 });

    const full = startBuild(siteDir);
    const building = await probeUntil(server, () => full.child.exitCode !== null, 'the full build');
    expect(full.child.exitCode, full.log()).toBe(0);
    // Until the swap: not ready and 503; after it: ready and the page. Never ready with a miss.
    expect(building[0]).toEqual({ site: false, page: 503 });
    for (const p of building)
      expect([
        { site: false, page: 503 },
        { site: true, page: 200 },
      ]).toContainEqual(p);
    expect(await probe(server)).toEqual({ site: true, page: 200 });
    expect(existsSync(join(siteDir, SITE_STAMP_FILE))).toBe(true);
    // The killed build's folder was cleared by the next one: only the site is left beside it.
    expect(readdirSync(parent)).toEqual(['dist']);
  }, 600_000);

  it('a rebuild keeps the old site answering until it swaps the new one in; killed mid-way, it leaves the old one', async () => {
    const stampOf = () => readFileSync(join(siteDir, SITE_STAMP_FILE), 'utf8');
    const before = statSync(join(siteDir, SITE_STAMP_FILE)).mtimeMs;
    const rebuild = startBuild(siteDir);
    const during = await probeUntil(server, () => rebuild.child.exitCode !== null, 'the rebuild');
    expect(rebuild.child.exitCode, rebuild.log()).toBe(0);
    expect(statSync(join(siteDir, SITE_STAMP_FILE)).mtimeMs).toBeGreaterThan(before);
    // The old site answers all along. The swap is two renames, microseconds apart: a probe that
    // fell between them would see "not built yet" (503, not ready), never a miss.
    expect(during.length).toBeGreaterThan(5);
    expect(during.filter((p) => p.site !== true || p.page !== 200).length).toBeLessThanOrEqual(1);
    for (const p of during)
      expect([
        { site: true, page: 200 },
        { site: false, page: 503 },
      ]).toContainEqual(p);

    const stamp = stampOf();
    const index = readFileSync(join(siteDir, 'index.html'), 'utf8');
    const killed = startBuild(siteDir);
    const untilKilled = await probeUntil(
      server,
      () => midBuild(parent, 'dist') || killed.child.exitCode !== null,
      'the next rebuild to write pages',
    );
    expect(killed.child.exitCode, killed.log()).toBeNull();
    await killBuild(killed);
    for (const p of untilKilled) expect(p).toEqual({ site: true, page: 200 });
    expect(await probe(server)).toEqual({ site: true, page: 200 });
    expect(stampOf()).toBe(stamp);
    expect(readFileSync(join(siteDir, 'index.html'), 'utf8')).toBe(index);
  }, 600_000);
});

it('a site directory without the stamp (what an interrupted build wrote in place) is neither served nor ready', async () => {
  // An older Flowport built into site/dist directly: killed mid-build, it left pages and no stamp.
  const siteDir = join(tempDir(), 'dist');
  mkdirSync(join(siteDir, 'start'), { recursive: true });
  writeFileSync(join(siteDir, 'index.html'), '<!doctype html><title>Docs</title>');
  writeFileSync(join(siteDir, '404.html'), '<!doctype html><title>Not found</title>');
  const s = await startTestServer({
    worker: false,
    bootstrapSandbox: false,
    store: 'sqlite',
    env: { FLOWPORT_SITE_DIR: siteDir },
  });
  try {
    expect(await probe(s)).toEqual({ site: false, page: 503 });
    expect((await fetch(`${s.url}/`)).status).toBe(503);
    // The stamp, written last, makes it a complete build.
    writeFileSync(join(siteDir, SITE_STAMP_FILE), `${JSON.stringify({ inputs: 'x' })}\n`);
    expect((await probe(s)).site).toBe(true);
    expect((await fetch(`${s.url}/`)).status).toBe(200);
  } finally {
    await s.close();
  }
});
