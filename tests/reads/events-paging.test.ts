// Must show 3 (issue 5) on SQLite: events listing over 100,000 stored events with
// filters and cursor paging returns correct, stable pages while new events arrive.
// The scenario and the semantics it checks are in ./paging-scenario.ts.
import { startTestServer } from '../helpers/runtime.ts';
import { describeEventsPaging } from './paging-scenario.ts';

describeEventsPaging({
  name: 'SQLite',
  // No worker: stored events keep their states while the pages are compared with SQL.
  start: () => startTestServer({ worker: false, bootstrapSandbox: false }),
});
