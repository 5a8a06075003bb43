// Files a maintainer can read (issue 41, point 5): no file of api/src over 600 lines, no function
// over 100. What is over today is listed in KNOWN_OVERSIZE (tests/architecture/sizes.ts), which only shrinks.
import { describe, expect, it } from 'vitest';
import { KNOWN_OVERSIZE, MAX_FILE_LINES, MAX_FUNCTION_LINES, oversize, oversizeIn } from './sizes.ts';

const found = oversize();

describe('files a maintainer can read', () => {
  it(`has no file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES}, beyond the known ones`, () => {
    const fresh = found
      .filter((o) => !KNOWN_OVERSIZE.includes(o.key))
      .map((o) => `api/src/${o.key} (${o.lines} lines)`);
    expect(
      fresh,
      `split these by what they do (a file over ${MAX_FILE_LINES} lines into modules, a function over ${MAX_FUNCTION_LINES} into named steps)`,
    ).toEqual([]);
  });

  it('lists in KNOWN_OVERSIZE only what is still over (the list only shrinks)', () => {
    const keys = new Set(found.map((o) => o.key));
    expect(
      KNOWN_OVERSIZE.filter((k) => !keys.has(k)),
      'take these off KNOWN_OVERSIZE in tests/architecture/sizes.ts',
    ).toEqual([]);
  });

  it('measures each function from its first line to its last, by the name a reader finds it under', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `    step${i}();`).join('\n');
    const text = `export class Worker {\n  claim(): void {\n${lines(99)}\n  }\n}\nconst short = () => {\n${lines(98)}\n};\nexport function run(): void {\n  [1].map((x) => {\n${lines(99)}\n  });\n}\n`;
    expect(oversizeIn('handoff/made-up.ts', text)).toEqual([
      { key: 'handoff/made-up.ts: Worker.claim', lines: 101 },
      { key: 'handoff/made-up.ts: run', lines: 103 },
      { key: 'handoff/made-up.ts: run > (callback)', lines: 101 },
    ]);
    expect(oversizeIn('big.ts', 'x;\n'.repeat(601))).toEqual([{ key: 'big.ts', lines: 601 }]);
    expect(oversizeIn('ok.ts', 'x;\n'.repeat(600))).toEqual([]);
  });
});
