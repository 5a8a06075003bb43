// Hand-written guides state facts the code defines: replay availability reasons, action
// intent states, support codes, what an endpoint edit can change. Read from the Markdown
// twins, as an LLM reads them, and compared with the definitions in the code.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_DESCRIPTIONS } from '../../api/src/auth/scopes.ts';
import { DOCS_PATHS } from '../../api/src/docs-paths.ts';
import { ERROR_CATALOG, ERROR_CODES } from '../../api/src/errors/catalog.ts';
import { INTAKE_SUPPORT_CODES } from '../../api/src/errors/codes/intake.ts';
import { REPLAY_UNAVAILABLE_REASONS } from '../../api/src/handoff/lifecycle.ts';
import { SUPPORT_CODES } from '../../api/src/handoff/outcomes.ts';
import { AUTH_MODE_LIST } from '../../api/src/intake/auth-modes.ts';
import { INTENT_STATES } from '../../api/src/intents/types.ts';
import { EndpointEditIntentBody } from '../../api/src/operations/intents/preview-endpoint-edit.ts';
import { REPO_ROOT } from '../../scripts/docs/lib/site-paths.ts';
import { distFiles, ensureSiteBuilt, readDist, twinOf } from './helpers/site.ts';

beforeAll(ensureSiteBuilt, 900_000);

describe('guides agree with the code', () => {
  it('the replay guide lists every reason an event can be unavailable for replay, with the text reads answer', () => {
    const twin = readDist(twinOf(DOCS_PATHS.replay));
    for (const [reason, text] of Object.entries(REPLAY_UNAVAILABLE_REASONS)) {
      expect(twin, reason).toContain(`| \`${reason}\` | ${text} |`);
    }
  });

  it('the action intents guide draws the states an intent really has, and only those', () => {
    const twin = readDist('/agent-access/action-intents.md');
    const diagram = /## States[\s\S]*?```\n([\s\S]*?)\n```/.exec(twin)?.[1];
    expect(diagram).toBeDefined();
    const words = new Set((diagram as string).replace(/\([^)]*\)/g, '').match(/[a-z_]+/g));
    words.delete('confirm'); // the transition's label
    expect([...words].sort()).toEqual([...INTENT_STATES].sort());
  });

  it('every support code a page quotes exists', () => {
    const known = new Set<string>(
      [...Object.values(SUPPORT_CODES), ...Object.values(INTAKE_SUPPORT_CODES)].map((s) => s.code),
    );
    const unknown: string[] = [];
    for (const file of distFiles().filter((f) => f.endsWith('.md'))) {
      for (const line of readDist(file).split('\n')) {
        if (!/support code/i.test(line)) continue;
        for (const m of line.matchAll(/`([A-Z0-9]+(?:-[A-Z0-9]+)+)`/g)) {
          if (!known.has(m[1] as string)) unknown.push(`${file}: ${m[1]}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });

  it('the endpoints guide names, for an edit, exactly the statuses the edit operation accepts', () => {
    const twin = readDist(twinOf(DOCS_PATHS.setUpEndpoints));
    const editRow = twin.split('\n').find((l) => l.startsWith('| Edit'));
    expect(editRow).toBeDefined();
    const accepted = EndpointEditIntentBody.shape.status.unwrap().options;
    const named = ['active', 'paused', 'archive'].filter((s) => (editRow as string).includes(s));
    expect(named.sort()).toEqual([...accepted].sort());
  });

  it('the limits guides name every code a monthly cap answers (402)', () => {
    const capCodes = ERROR_CODES.filter((c) => ERROR_CATALOG[c].status === 402);
    expect(capCodes.length).toBeGreaterThan(1);
    for (const page of [DOCS_PATHS.usageLimits, DOCS_PATHS.rateLimits]) {
      const twin = readDist(twinOf(page));
      for (const c of capCodes) expect(twin, `${page} ${c}`).toContain(`\`${c}\``);
    }
  });

  it('the auth modes overview and the duplicates guide name the id each preset dedupes on', () => {
    const overview = readDist(twinOf(DOCS_PATHS.authModes)).split('\n');
    const duplicates = readDist(twinOf(DOCS_PATHS.duplicates)).split('\n');
    for (const f of AUTH_MODE_LIST) {
      const names = !f.externalId ? [] : f.externalId.from === 'json' ? [f.externalId.path] : f.externalId.names;
      for (const [page, lines] of [
        ['overview', overview],
        ['duplicates', duplicates],
      ] as const) {
        const row = lines.find((l) => l.startsWith(`| [\`${f.mode}\`]`) || l.startsWith(`| \`${f.mode}\` |`));
        expect(row, `${page} ${f.mode}`).toBeDefined();
        const dedupeCell = (row as string).split(' | ').at(-1)?.toLowerCase() ?? '';
        for (const n of names) expect(dedupeCell, `${page} ${f.mode}`).toContain(`\`${n.toLowerCase()}\``);
      }
    }
  });
});

describe('the first minute', () => {
  it('the README and the Quickstart state the same Node requirement, the one package.json enforces', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const min = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
    expect(min, 'engines.node is ">=MAJOR.MINOR"').toBeDefined();
    const statement = `Node.js ${min} or newer`;
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toContain(statement);
    expect(readDist(twinOf(DOCS_PATHS.quickstart))).toContain(statement);
  });

  it('scope descriptions use "an" before a vowel ("Preview an endpoint create action")', () => {
    const descriptions = Object.values(SCOPE_DESCRIPTIONS);
    expect(descriptions).toContain('Preview an endpoint create action (creates an action intent; changes nothing).');
    expect(descriptions.filter((d) => /\ba [aeiou]/i.test(d))).toEqual([]);
  });
});
