// `npm run docs:record`: run the product in sandbox mode through the recording scenarios, write
// what it answered to openapi/examples/ (ADR 0009), and regenerate the OpenAPI contract from them.
// One answer quotes the contract itself (getOpenApiOperation), so it records again until the
// recordings and the contract agree (twice at most after a change).
// `--check` writes nothing and fails (exit 1) when a recording differs from what the product answers.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { recordingsText } from '../../api/src/http/openapi-examples.ts';
import { RECORDINGS_DIR, recordExamples, staleRecordings, writeRecordings } from './lib/recordings.ts';

const root = join(import.meta.dirname, '..', '..');

if (process.argv.includes('--check')) {
  const stale = staleRecordings(await recordExamples());
  for (const file of stale)
    console.error(
      `openapi/examples/${file} no longer matches what the product answers: run \`npm run docs:record\` and commit the result.`,
    );
  if (stale.length === 0) console.log('openapi/examples/ matches what the product answers.');
  process.exit(stale.length > 0 ? 1 : 0);
}

for (let round = 1; ; round++) {
  const recordings = await recordExamples();
  const changed = Object.entries(recordingsText(recordings)).filter(([file, text]) => {
    const path = join(RECORDINGS_DIR, file);
    return !existsSync(path) || readFileSync(path, 'utf8') !== text;
  });
  writeRecordings(recordings);
  const contract = join(root, 'openapi', 'agent-operations.openapi.json');
  const before = existsSync(contract) ? readFileSync(contract, 'utf8') : '';
  const gen = spawnSync(process.execPath, [join(root, 'scripts', 'gen-openapi.ts')], { cwd: root, stdio: 'inherit' });
  if (gen.status !== 0) process.exit(gen.status ?? 1);
  console.log(
    `docs:record: round ${round}: ${Object.values(recordings).flat().length} exchanges, ${changed.length} file(s) changed in ${relative(root, RECORDINGS_DIR)}/`,
  );
  if (changed.length === 0 && readFileSync(contract, 'utf8') === before) break;
  if (round === 4) {
    console.error('docs:record: the recordings did not settle after 4 rounds; the answers are not deterministic.');
    process.exit(1);
  }
}
process.exit(0);
