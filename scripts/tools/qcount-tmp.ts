import pg from 'pg';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchFlowport } from '../lib/bench-flowport.ts';
import { testDatabaseUrl } from '../../tests/helpers/store.ts';
import { withSearchPath } from '../../api/src/store/postgres.ts';
const fp = await startBenchFlowport({
  store: 'postgres',
  worker: false,
  keep: {
    dataDir: join(tmpdir(), 'flowport-bench-reads-postgres'),
    databaseUrl: withSearchPath(testDatabaseUrl(), 'bench_reads_keep'),
  },
});
const admin = new pg.Client({ connectionString: testDatabaseUrl() });
await admin.connect();
const get = (p: string) =>
  fetch(`${fp.url}${p}`, { headers: { authorization: `Bearer ${fp.creds.grant_token}` } }).then((r) => r.text());
await get('/agent/v1/events?limit=50');
await admin.query("ALTER SYSTEM SET log_statement = 'all'");
await admin.query('SELECT pg_reload_conf()');
await new Promise((r) => setTimeout(r, 500));
console.log('---grant');
await get('/agent/v1/grant');
await new Promise((r) => setTimeout(r, 200));
console.log('---events');
await get('/agent/v1/events?limit=50');
await new Promise((r) => setTimeout(r, 200));
await admin.query('ALTER SYSTEM RESET log_statement');
await admin.query('SELECT pg_reload_conf()');
await admin.end();
await fp.stop();
