// `npm run openapi`: write openapi/agent-operations.openapi.json from the registry.
// `--check` fails (exit 1) when the committed file differs from what the registry produces.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiJson } from '../api/src/http/openapi.ts';

export const OPENAPI_FILE = join(import.meta.dirname, '..', 'openapi', 'agent-operations.openapi.json');

const json = buildOpenApiJson();
if (process.argv.includes('--check')) {
  const current = existsSync(OPENAPI_FILE) ? readFileSync(OPENAPI_FILE, 'utf8') : '';
  if (current !== json) {
    console.error('openapi/agent-operations.openapi.json is stale: run `npm run openapi` and commit the result.');
    process.exit(1);
  }
  console.log('openapi/agent-operations.openapi.json is up to date.');
} else {
  mkdirSync(join(import.meta.dirname, '..', 'openapi'), { recursive: true });
  writeFileSync(OPENAPI_FILE, json);
  console.log(`wrote ${OPENAPI_FILE}`);
}
