// Must show 3 (issue 5) on PostgreSQL (the scale-out store): the same paging
// scenario as events-paging.test.ts, in a fresh schema of the test database.
import pg from 'pg';
import { newId } from '../../api/src/ids.ts';
import { startTestServer } from '../helpers/runtime.ts';
import { describeEventsPaging } from './paging-scenario.ts';

const PG_URL = process.env.FLOWPORT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `paging_${newId('request').slice(4, 20)}`;
let admin: pg.Client | null = null;

describeEventsPaging({
  name: 'PostgreSQL',
  async start() {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    return startTestServer({
      worker: false,
      bootstrapSandbox: false,
      env: { FLOWPORT_DATABASE_URL: `${PG_URL}?options=-c%20search_path%3D${schema}` },
    });
  },
  async stop() {
    await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin?.end();
  },
});
