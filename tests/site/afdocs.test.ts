// Agent readiness: afdocs (the Agent-Friendly Documentation Spec checker, an npm dev dependency)
// scores the built docs site as Flowport serves it (the real server on loopback, site/dist
// mounted by api/src/http/static-site.ts), offline. The scorecard is printed in the test output;
// the site must score at least 95 with no failing check.
import { computeScore, type ReportResult, runChecks, type ScoreResult } from 'afdocs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/**
 * afdocs through its library API (`runChecks`, `computeScore`), with what the CLI would be given:
 * `afdocs check <url> --sampling deterministic --request-delay 0 --max-concurrency 4
 * --network-context ci`. Not the CLI itself: afdocs 0.x leaves a 60 s body-read timer armed after
 * its last request, so its process lingers a minute after printing the scorecard.
 */
async function scorecard(url: string): Promise<{ report: ReportResult; score: ScoreResult; text: string }> {
  const report = await runChecks(url, {
    samplingStrategy: 'deterministic',
    requestDelay: 0,
    maxConcurrency: 4,
    networkContext: 'ci',
  });
  const score = computeScore(report);
  const text = [
    `afdocs scorecard for ${url}`,
    `  Overall Score: ${score.overall} / 100 (${score.grade})`,
    ...Object.entries(score.categoryScores).map(
      ([name, c]) => `    ${name.padEnd(32)} ${c.score ?? '–'} (${c.grade ?? 'N/A'})`,
    ),
    ...report.results.map((r) => `  ${r.status.toUpperCase().padEnd(5)} ${r.id}: ${r.message}`),
  ].join('\n');
  return { report, score, text };
}

describe('afdocs agent-readiness scorecard', () => {
  it(`scores at least ${MIN_SCORE} with no failing check`, async () => {
    const { report, score, text } = await scorecard(server.url);
    console.log(text);
    expect(report.results.length, 'afdocs ran its checks').toBeGreaterThan(20);
    const failing = report.results.filter((r) => r.status === 'fail' || r.status === 'error');
    expect(
      failing.map((r) => `${r.id}: ${r.message}`),
      'failing checks',
    ).toEqual([]);
    expect(score.overall).toBeGreaterThanOrEqual(MIN_SCORE);
  }, 900_000);
});
