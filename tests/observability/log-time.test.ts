// The log line's time field is made once per millisecond (ADR 0315): it is pino's own ISO text of
// the moment the line was written, and lines of one millisecond share it.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, isoTimeField } from '../../api/src/observability/log.ts';

describe('the log time field', () => {
  it("is pino's ISO time text of the current millisecond", () => {
    // Compared within one millisecond: the two calls around pino's agree, so pino's ran in it too.
    for (let tries = 0; tries < 100; tries++) {
      const before = isoTimeField();
      const theirs = pino.stdTimeFunctions.isoTime();
      if (isoTimeField() !== before) continue;
      expect(before).toBe(theirs);
      return;
    }
    throw new Error('no two calls within one millisecond in 100 tries');
  });

  it('is the moment of each line: lines written across milliseconds carry their own times', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n')) if (l) lines.push(l);
        done();
      },
    });
    const log = createLogger({ logLevel: 'info' }, { destination: sink });
    const first = Date.now();
    log.info({ n: 1 }, 'one');
    while (Date.now() < first + 3) {
      // wait a few milliseconds
    }
    log.info({ n: 2 }, 'two');
    const last = Date.now();
    const times = lines.map((l) => Date.parse((JSON.parse(l) as { time: string }).time));
    expect(times).toHaveLength(2);
    expect(times[0]).toBeGreaterThanOrEqual(first);
    expect(times[1]).toBeGreaterThanOrEqual(first + 3);
    expect(times[1]).toBeLessThanOrEqual(last);
  });
});
