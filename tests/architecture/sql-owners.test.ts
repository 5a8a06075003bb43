// One owner per table, SQL only on the store floor and in the read models (issue 41): every file
// of api/src is read for SQL text and for writes to tables it does not own (tests/architecture/tables.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from '../helpers/import-graph.ts';
import { NOT_YET_MOVED, sqlViolations, TABLE_OWNERS } from './tables.ts';

const files = sourceFiles().map((f) => ({ file: relative(SRC, f), text: readFileSync(f, 'utf8') }));

describe('one owner per table', () => {
  it('names an owner for every table the migrations create, and each owner exists', () => {
    const created = new Set<string>();
    const dropped = new Set<string>();
    for (const f of readdirSync(`${SRC}/store/migrations`)) {
      const text = readFileSync(`${SRC}/store/migrations/${f}`, 'utf8');
      for (const m of text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)) created.add(m[1] as string);
      for (const m of text.matchAll(/DROP TABLE (?:IF EXISTS )?([a-z_]+)/g)) dropped.add(m[1] as string);
    }
    const live = [...created].filter((t) => !dropped.has(t));
    expect(live).toContain('events');
    expect(
      live.filter((t) => !TABLE_OWNERS[t]),
      'tables with no owner in tests/architecture/tables.ts',
    ).toEqual([]);
    const owners = new Set(Object.values(TABLE_OWNERS));
    const known = new Set(files.map((f) => f.file));
    expect([...owners].filter((o) => !known.has(o) && !o.startsWith('store/tables/'))).toEqual([]);
  });

  it('writes each table only from its owner, and holds SQL only on the store floor and in read models', () => {
    const wrong = files.filter((f) => !NOT_YET_MOVED.includes(f.file)).flatMap((f) => sqlViolations(f.file, f.text));
    expect(wrong, `\n${wrong.join('\n\n')}\n`).toEqual([]);
  });

  it('lists in NOT_YET_MOVED only files that still need moving (the list only shrinks)', () => {
    const clean = NOT_YET_MOVED.filter((file) => {
      const f = files.find((x) => x.file === file);
      return !f || sqlViolations(f.file, f.text).length === 0;
    });
    expect(clean, 'take these off NOT_YET_MOVED in tests/architecture/tables.ts').toEqual([]);
  });

  it('fails a write from outside the owner and SQL on a surface, saying where the code belongs', () => {
    const text = "await db.run('UPDATE events SET state = ? WHERE id = ?', [s, id]);\n";
    const found = sqlViolations('shopify/made-up.ts', text);
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/holds SQL\. SQL lives on the store floor/);
    expect(found[1]).toMatch(/writes events, which api\/src\/store\/tables\/events\/ owns/);
    expect(sqlViolations('store/tables/events/deliver.ts', text)).toEqual([]);
    expect(sqlViolations('reads/made-up.ts', text)).toEqual([
      expect.stringMatching(/writes events, which api\/src\/store\/tables\/events\/ owns/),
    ]);
    expect(sqlViolations('handoff/made-up.ts', '// UPDATE events SET state in a comment\n')).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  it('shows every table with its owner, as TABLE_OWNERS says', () => {
    const doc = readFileSync(`${SRC}/../../docs/architecture.md`, 'utf8');
    const rows = new Map<string, string>();
    for (const m of doc.matchAll(/^\| `api\/src\/([^`]+)` \| (.+) \|$/gm))
      for (const t of (m[2] as string).matchAll(/`([a-z_]+)`/g)) rows.set(t[1] as string, m[1] as string);
    expect(Object.fromEntries(rows)).toEqual(TABLE_OWNERS);
  });
});
