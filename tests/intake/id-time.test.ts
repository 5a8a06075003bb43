// idTime reads an id's 10 time characters (read per accepted event for its usage period, ADR 0315):
// it gives back the moment an id was minted at, and NaN for characters that are no base-32 digit.
import { describe, expect, it } from 'vitest';
import { idFloor, idTime, newId } from '../../api/src/ids.ts';

describe('idTime', () => {
  it('gives back the millisecond an id was minted at', () => {
    for (const ms of [0, 1, 31, 32, 1_700_000_000_000, Date.UTC(2026, 10, 30, 23, 59, 59, 999), 2 ** 48 - 1])
      expect(idTime(idFloor('event', ms))).toBe(ms);
    const before = Date.now();
    const id = newId('event');
    expect(idTime(id)).toBeGreaterThanOrEqual(before);
    expect(idTime(id)).toBeLessThanOrEqual(Date.now());
  });

  it('is NaN for a character outside the alphabet, or an id too short', () => {
    const good = idFloor('event', 1_700_000_000_000);
    for (const bad of ['i', 'l', 'o', 'u', 'A', '~', 'é', '\u0100']) {
      const id = `evt_${bad}${good.slice(5)}`;
      expect(idTime(id), JSON.stringify(bad)).toBeNaN();
    }
    expect(idTime('evt_0123')).toBeNaN();
    expect(idTime('no-prefix-here')).toBeNaN();
  });
});
