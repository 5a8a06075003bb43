// Agent readiness: afdocs (the Agent-Friendly Documentation Spec checker, an npm dev dependency)
// scores the built docs site as Flowport serves it (the real server on loopback, site/dist
// mounted by api/src/http/static-site.ts), offline. The scorecard is printed in the test output;
// the site must score at least 95 with no failing check.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../scripts/docs/lib/site-paths.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { DIST_DIR, ensureSiteBuilt } from './helpers/site.ts';

const MIN_SCORE = 95;

let server: TestServer;

beforeAll(async () => {
  await ensureSiteBuilt();
  // The store plays no part here: SQLite on both suite runs.
  server = await startTestServer({
    worker: false,
    bootstrapSandbox: false,
    store: 'sqlite',
    env: { FLOWPORT_SITE_DIR: DIST_DIR },
  });
}, 900_000);

afterAll(async () => {
  await server?.close();
});

function runAfdocs(url: string, format: 'scorecard' | 'json'): Promise<{ code: number | null; stdout: string }> {
  // The pinned Node (afdocs needs >= 22) runs the CLI from node_modules; no network beyond loopback.
  const node = join(REPO_ROOT, 'node_modules/.bin/node');
  const args = [
    join(REPO_ROOT, 'node_modules/afdocs/bin/afdocs.mjs'),
    'check',
    url,
    '--format',
    format,
    ...(format === 'json' ? ['--score'] : []),
    '--sampling',
    'deterministic',
    '--request-delay',
    '0',
    '--max-concurrency',
    '4',
    '--network-context',
    'ci',
    '--quiet',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { cwd: REPO_ROOT, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('afdocs agent-readiness scorecard', () => {
  it(`scores at least ${MIN_SCORE} with no failing check`, async () => {
    const card = await runAfdocs(server.url, 'scorecard');
    console.log(card.stdout);
    const score = /Overall Score:\s*(\d+)\s*\/\s*100/.exec(card.stdout);
    expect(score, 'the scorecard has an overall score').not.toBeNull();
    const failing = card.stdout.split('\n').filter((l) => /^\s+FAIL\s/.test(l));
    expect(failing, 'failing checks').toEqual([]);
    expect(Number(score?.[1])).toBeGreaterThanOrEqual(MIN_SCORE);
  }, 900_000);
});
