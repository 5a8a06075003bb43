// Assembles the docs site's content tree before `astro build`:
//   content/**.md (hand-written)  ─┐
//   registry, catalog, scopes,     ├─▶ site/src/content/docs/ (gitignored, rebuilt every time)
//   plans, OpenAPI (generated)    ─┘
// and copies the OpenAPI file and the self-hosted Scalar bundle into site/public/.
// Hand-written pages may embed generated tables with `<!-- generated:NAME -->`.
// See docs/adr/ (docs site) for why generated pages are not committed.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { ERROR_CATALOG } from '../../api/src/errors/catalog.ts';
import type { ErrorDef } from '../../api/src/errors/catalog.ts';
import { ON_REFUSAL, SAFETY_BOUNDARIES } from '../../api/src/services/manifest.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { PLAN_IDS, PLANS } from '../../api/src/plans.ts';
import { CONFIG_VARIABLES, ENV } from '../../api/src/config.ts';
import { type OpenApiDocument, renderApiReference } from './lib/api-reference.ts';
import { authModeDirectives } from './lib/auth-mode-pages.ts';
import { page } from './lib/markdown.ts';
import {
  renderHeldShopTable,
  renderIntakeSupportCodeTable,
  renderIntakeLimitsTable,
  renderLifecycleTable,
  renderReplayUnavailableTable,
  renderRetrySchedule,
  renderSupportCodeTable,
  renderTriggerVariants,
} from './lib/product-tables.ts';
import {
  renderCliReference,
  renderErrorIndex,
  renderErrorPage,
  renderManifestReference,
  renderMcpReference,
  renderPlanTable,
  renderTierTable,
} from './lib/registry-pages.ts';
import { DOCS_DIR, OPENAPI_FILE, PUBLIC_GENERATED, REPO_ROOT, siteOrigin } from './lib/site-paths.ts';

const CONTENT_DIR = join(REPO_ROOT, 'content');

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else out.push(full);
  }
  return out;
}

function write(relPath: string, text: string, written: Set<string>): void {
  if (written.has(relPath))
    throw new Error(`Two docs pages want ${relPath}: a hand-written page in content/ collides with a generated one.`);
  written.add(relPath);
  const full = join(DOCS_DIR, relPath);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
}

export interface GenerateResult {
  pages: string[];
  errorCodes: number;
  operations: number;
}

export function generate(): GenerateResult {
  const origin = siteOrigin();
  if (!existsSync(OPENAPI_FILE)) {
    throw new Error(
      `${relative(REPO_ROOT, OPENAPI_FILE)} is missing. Run \`npm run openapi\` to generate it, then build the site again.`,
    );
  }
  const openapi = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
  const catalog = ERROR_CATALOG as Record<string, ErrorDef>;
  const codes = Object.keys(catalog).sort();
  const plans = PLAN_IDS.map((id) => PLANS[id]);

  const directives: Record<string, () => string> = {
    'tier-table': renderTierTable,
    'plan-table': () => renderPlanTable(plans),
    'lifecycle-states': renderLifecycleTable,
    'support-codes': renderSupportCodeTable,
    'held-shops': renderHeldShopTable,
    'intake-support-codes': renderIntakeSupportCodeTable,
    'intake-limits': renderIntakeLimitsTable,
    'retry-schedule': renderRetrySchedule,
    'replay-unavailable': renderReplayUnavailableTable,
    'trigger-variants': renderTriggerVariants,
    'config-table': () =>
      [
        '| Variable | Default | What it sets |',
        '| --- | --- | --- |',
        ...(Object.keys(ENV) as (keyof typeof ENV)[]).map(
          (k) => `| \`${ENV[k]}\` | ${CONFIG_VARIABLES[k].default} | ${CONFIG_VARIABLES[k].about} |`,
        ),
      ].join('\n'),
    ...authModeDirectives(),
  };

  rmSync(DOCS_DIR, { recursive: true, force: true });
  mkdirSync(DOCS_DIR, { recursive: true });
  const written = new Set<string>();

  // 1. Hand-written pages, with generated tables expanded in place.
  for (const file of walk(CONTENT_DIR)) {
    const rel = relative(CONTENT_DIR, file);
    if (!/\.md$/.test(rel))
      throw new Error(`content/${rel}: only .md pages belong in content/ (MDX would make the Markdown twins lossy).`);
    const text = readFileSync(file, 'utf8').replace(/<!--\s*generated:([a-z0-9-]+)\s*-->/g, (_m, name: string) => {
      const render = directives[name];
      if (!render)
        throw new Error(
          `content/${rel}: unknown directive generated:${name} (known: ${Object.keys(directives).join(', ')})`,
        );
      return render();
    });
    write(rel, text, written);
  }

  // 2. Generated reference pages.
  const src = (...files: string[]) => files.join(', ');
  write(
    'reference/api.md',
    page(
      {
        title: 'Agent Operations API reference',
        description:
          'Every operation of the Agent Operations API: method, path, scope, parameters, request body, responses and error codes.',
        sidebar: { order: 1, label: 'API' },
        tableOfContents: { maxHeadingLevel: 3 },
      },
      renderApiReference(openapi, codes),
      src('openapi/agent-operations.openapi.json'),
    ),
    written,
  );
  write(
    'reference/mcp.md',
    page(
      {
        title: 'MCP reference',
        description:
          'The MCP endpoint, client configuration and every tool with its scope, annotations, input and output.',
        sidebar: { order: 2, label: 'MCP' },
        tableOfContents: { maxHeadingLevel: 3 },
      },
      renderMcpReference(OPERATIONS, origin),
      src('api/src/operations/registry.ts'),
    ),
    written,
  );
  write(
    'reference/cli.md',
    page(
      {
        title: 'CLI reference',
        description:
          'Every flowport command (agent, helper and operator commands), configuration, output and exit codes.',
        sidebar: { order: 4, label: 'CLI' },
      },
      renderCliReference(),
      src('api/src/operations/registry.ts', 'api/src/cli/definitions.ts', 'api/src/cli/exit-codes.ts'),
    ),
    written,
  );
  const manifestOp = OPERATIONS.find((op) => op.operationId === 'getManifest');
  if (!manifestOp)
    throw new Error('The registry has no getManifest operation; the manifest reference cannot be generated.');
  write(
    'reference/manifest.md',
    page(
      {
        title: 'Manifest reference',
        description: 'GET /agent/v1/manifest: what it holds and why agents read it first.',
        sidebar: { order: 5, label: 'Manifest' },
      },
      renderManifestReference(manifestOp, SAFETY_BOUNDARIES, ON_REFUSAL, origin),
      src('api/src/operations/manifest/get.ts'),
    ),
    written,
  );
  write(
    'reference/scopes.md',
    page(
      {
        title: 'Tiers and scopes',
        description: 'Every grant tier and the scopes it expands to.',
        sidebar: { order: 6 },
      },
      `A grant carries scopes. Humans pick a tier when they create a grant; the tier expands to the scopes below. Scopes are \`<area>:read\`, \`<action>:preview\` and \`<action>:execute\`. See [grants and scopes](/agent-access/grants-and-scopes/) for how grants work.\n\n${renderTierTable()}`,
      src('api/src/auth/scopes.ts'),
    ),
    written,
  );
  write(
    'reference/plans.md',
    page(
      {
        title: 'Plans and limits',
        description: 'Monthly allowances, retention, dedupe windows and rate limits per plan.',
        sidebar: { order: 7 },
      },
      `Every shop is on one plan. Monthly allowances reset each month. Plan caps answer \`402\`; rate limits answer \`429\` with \`Retry-After\`; sender intake past the event cap answers \`429\` with \`Retry-After\` so senders retry later and nothing is lost. See [usage limits and plans](/operate/usage-limits-and-plans/).\n\n${renderPlanTable(plans)}`,
      src('api/src/plans.ts'),
    ),
    written,
  );
  write(
    'reference/errors/index.md',
    page(
      {
        title: 'Error codes',
        description: 'Every stable error code with its HTTP status, refusal layer and page.',
        sidebar: { order: 8, label: 'Error codes' },
      },
      renderErrorIndex(catalog),
      src('api/src/errors/catalog.ts'),
    ),
    written,
  );
  for (const c of codes) {
    const def = catalog[c] as ErrorDef;
    write(
      `reference/errors/${c}.md`,
      page(
        { title: c, description: `${def.title} (HTTP ${def.status}).`, sidebar: { hidden: true } },
        renderErrorPage(c, def, origin),
        src('api/src/errors/catalog.ts'),
      ),
      written,
    );
  }

  // 3. Static files the site serves as they are.
  rmSync(PUBLIC_GENERATED.root, { recursive: true, force: true });
  mkdirSync(dirname(PUBLIC_GENERATED.openapi), { recursive: true });
  cpSync(OPENAPI_FILE, PUBLIC_GENERATED.openapi);
  const require = createRequire(import.meta.url);
  const scalarBundle = require.resolve('@scalar/api-reference/browser/standalone.js');
  mkdirSync(dirname(PUBLIC_GENERATED.scalar), { recursive: true });
  cpSync(scalarBundle, PUBLIC_GENERATED.scalar);

  return { pages: [...written].sort(), errorCodes: codes.length, operations: OPERATIONS.length };
}

if (import.meta.main) {
  const started = Date.now();
  const result = generate();
  console.log(
    `docs: assembled ${result.pages.length} pages (${result.operations} operations, ${result.errorCodes} error codes) in ${Date.now() - started} ms`,
  );
}
