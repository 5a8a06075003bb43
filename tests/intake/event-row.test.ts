// Intake writes event rows as positional parameters (eventRow, written out for speed); their order
// must be EVENT_COLUMNS', or a value would land in another column.
import { describe, expect, it } from 'vitest';
import { EVENT_COLUMNS, type EventInsert, eventRow } from '../../api/src/store/tables/events.ts';

describe('eventRow', () => {
  it('lists every column once, in EVENT_COLUMNS order', () => {
    const named = Object.fromEntries(EVENT_COLUMNS.map((c) => [c, c])) as EventInsert;
    expect(eventRow(named)).toEqual([...EVENT_COLUMNS]);
  });
});
