// `npm test`: every check, in the order CI runs them. Stops at the first failure.
//   typecheck → lint → generated files fresh → build the docs site → all tests (vitest)
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const steps: [string, string[]][] = [
  ['typecheck', ['run', '--silent', 'typecheck']],
  ['lint', ['run', '--silent', 'lint']],
  ['generated OpenAPI is fresh', ['run', '--silent', 'check:openapi']],
  ['build the docs site', ['run', '--silent', 'build:site']],
  ['tests', ['run', '--silent', 'test:unit']],
];

for (const [name, args] of steps) {
  const started = Date.now();
  console.log(`\n=== ${name}`);
  const r = spawnSync('npm', args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, FORCE_COLOR: process.env.CI ? '0' : '1' },
  });
  console.log(`=== ${name}: ${r.status === 0 ? 'ok' : 'FAILED'} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (r.status !== 0) process.exit(r.status ?? 1);
}
