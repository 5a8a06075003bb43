// Must show 3 (issue 5): events listing over 100,000 stored events with filters and cursor
// paging returns correct, stable pages while new events arrive. Runs on the suite's store: SQLite,
// and PostgreSQL in `npm test`'s PostgreSQL phase (once each). The scenario is in ./paging-scenario.ts.
import { startTestServer } from '../helpers/runtime.ts';
import { testStore } from '../helpers/store.ts';
import { describeEventsPaging } from './paging-scenario.ts';

describeEventsPaging({
  name: testStore() === 'postgres' ? 'PostgreSQL' : 'SQLite',
  // No worker: stored events keep their states while the pages are compared with SQL.
  start: () => startTestServer({ worker: false, bootstrapSandbox: false }),
});
