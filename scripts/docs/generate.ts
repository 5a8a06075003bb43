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
import { ASK_FOR_A_GRANT, WHO_CREATES_GRANTS } from '../../api/src/entry-points.ts';
import { PLAN_IDS, PLANS } from '../../api/src/plans.ts';
import { CONFIG_VARIABLES, ENV } from '../../api/src/config.ts';
import {
  apiOperationPath,
  type OpenApiDocument,
  operationFamilies,
  renderApiIndex,
  renderApiOperation,
} from './lib/api-reference.ts';
import { authModeDirectives } from './lib/auth-mode-pages.ts';
import { readRecordings } from '../../api/src/http/openapi-examples.ts';
import { RECORDED_DIRECTIVE, renderDirective, renderOperationExamples } from './lib/recorded-examples.ts';
import { renderMetricsTable } from './lib/metrics-table.ts';
import { type Crumb, page } from './lib/markdown.ts';
import { errorAreaLabel } from './lib/error-areas.ts';
import { familyLabel } from '../../api/src/operations/families.ts';
import {
  renderAuthCheckOrder,
  renderAuthFailureChecks,
  renderAuthFailureHints,
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
  cliGroups,
  renderCliGroup,
  renderCliIndex,
  renderErrorIndex,
  renderErrorPage,
  errorPageSummary,
  renderManifestReference,
  mcpFamilies,
  renderMcpFamily,
  renderMcpIndex,
  renderPlanTable,
  renderTierTable,
} from './lib/registry-pages.ts';
import { DOCS_DIR, OPENAPI_FILE, PUBLIC_GENERATED, REPO_ROOT, siteOrigin, withBuildOrigin } from './lib/site-paths.ts';

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
  // Commands and URLs name the serving origin: the server writes its own in place of the build's.
  writeFileSync(full, withBuildOrigin(text));
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
  const recordings = readRecordings();

  const directives: Record<string, () => string> = {
    'tier-table': renderTierTable,
    'who-creates-grants': () => WHO_CREATES_GRANTS,
    'ask-for-a-grant': () => ASK_FOR_A_GRANT,
    'plan-table': () => renderPlanTable(plans),
    'lifecycle-states': renderLifecycleTable,
    'support-codes': renderSupportCodeTable,
    'held-shops': renderHeldShopTable,
    'intake-support-codes': renderIntakeSupportCodeTable,
    'intake-limits': renderIntakeLimitsTable,
    'retry-schedule': renderRetrySchedule,
    'replay-unavailable': renderReplayUnavailableTable,
    'auth-failure-checks': renderAuthFailureChecks,
    'auth-failure-hints': renderAuthFailureHints,
    'auth-check-order': renderAuthCheckOrder,
    'trigger-variants': renderTriggerVariants,
    'config-table': () =>
      [
        '| Variable | Default | What it sets |',
        '| --- | --- | --- |',
        ...(Object.keys(ENV) as (keyof typeof ENV)[]).map(
          (k) => `| \`${ENV[k]}\` | ${CONFIG_VARIABLES[k].default} | ${CONFIG_VARIABLES[k].about} |`,
        ),
      ].join('\n'),
    'metrics-table': renderMetricsTable,
    'grafana-dashboard': () =>
      ['```json', readFileSync(join(REPO_ROOT, 'docs/grafana/flowport-dashboard.json'), 'utf8').trimEnd(), '```'].join(
        '\n',
      ),
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
    const text = readFileSync(file, 'utf8')
      // A recorded exchange (openapi/examples/FILE.json, entry NAME): `recorded:FILE/NAME` shows the
      // request and the answer, `recorded-answer:FILE/NAME [keys]` the answer (cut to those keys).
      .replace(RECORDED_DIRECTIVE, (_m, kind: string, ref: string, keys?: string) =>
        renderDirective(recordings, kind, ref, keys ? keys.split(',') : []),
      )
      .replace(/<!--\s*generated:([a-z0-9-]+)\s*-->/g, (_m, name: string) => {
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
  // The API, MCP and CLI references: an index page each, and one page per operation, tool
  // family and command group (each small enough for an agent to read whole; tests/site/page-size).
  const REFERENCE: Crumb = { label: 'Reference' };
  const API: Crumb = { label: 'API', href: '/reference/api/' };
  const MCP: Crumb = { label: 'MCP', href: '/reference/mcp/' };
  const CLI: Crumb = { label: 'CLI', href: '/reference/cli/' };
  write(
    'reference/api/index.md',
    page(
      {
        title: 'Agent Operations API reference',
        description: 'Every operation of the Agent Operations API by family, each with a page of its own.',
        sidebar: { order: 0, label: 'All operations' },
      },
      renderApiIndex(openapi),
      src('openapi/agent-operations.openapi.json'),
    ),
    written,
  );
  let order = 0;
  for (const { family, ops } of operationFamilies(openapi)) {
    for (const listed of ops) {
      const title = listed.op.summary ?? listed.op.operationId ?? `${listed.method} ${listed.path}`;
      write(
        `${apiOperationPath(listed).slice(1, -1)}.md`,
        page(
          {
            title,
            description: `${listed.method} ${listed.path}: ${familyLabel(family).toLowerCase()} operation of the Agent Operations API.`,
            sidebar: { order: ++order, label: title },
            breadcrumb: [REFERENCE, API, { label: `${familyLabel(family)} operations`, href: '/reference/api/' }],
          },
          renderApiOperation(
            openapi,
            listed,
            codes,
            renderOperationExamples(recordings, listed.op.operationId ?? '', '/reference/openapi/'),
          ),
          src('openapi/agent-operations.openapi.json', `openapi/examples/${listed.op.operationId}.json`),
        ),
        written,
      );
    }
  }
  write(
    'reference/mcp/index.md',
    page(
      {
        title: 'MCP reference',
        description: 'The MCP endpoint, client configuration and every tool, with a page per tool family.',
        sidebar: { order: 0, label: 'Connect and all tools' },
      },
      renderMcpIndex(OPERATIONS, origin),
      src('api/src/operations/registry.ts'),
    ),
    written,
  );
  mcpFamilies(OPERATIONS).forEach((family, i) => {
    write(
      `reference/mcp/${family}.md`,
      page(
        {
          title: `MCP tools: ${familyLabel(family).toLowerCase()}`,
          description: `The ${familyLabel(family).toLowerCase()} tools of the MCP endpoint: scope, annotations, input and output.`,
          sidebar: { order: i + 1, label: familyLabel(family) },
          breadcrumb: [REFERENCE, MCP],
        },
        renderMcpFamily(OPERATIONS, family),
        src('api/src/operations/registry.ts'),
      ),
      written,
    );
  });
  write(
    'reference/cli/index.md',
    page(
      {
        title: 'CLI reference',
        description:
          'The flowport command line: configuration, output and exit codes, and every command by group (agent, helper and operator commands).',
        sidebar: { order: 0, label: 'Configuration and all commands' },
      },
      renderCliIndex(),
      src('api/src/operations/registry.ts', 'api/src/cli/definitions.ts', 'api/src/cli/exit-codes.ts'),
    ),
    written,
  );
  cliGroups().forEach((group, i) => {
    write(
      `reference/cli/${group.slug}.md`,
      page(
        {
          title: `CLI: ${group.title.toLowerCase()}`,
          description: group.about,
          sidebar: { order: i + 1, label: group.title },
          breadcrumb: [REFERENCE, CLI],
        },
        renderCliGroup(group),
        src('api/src/operations/registry.ts', 'api/src/cli/definitions.ts'),
      ),
      written,
    );
  });
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
        sidebar: { order: 0, label: 'All error codes' },
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
        {
          title: c,
          description: errorPageSummary(def),
          // In the sidebar under "Error codes", grouped by area (site/src/route-middleware.ts).
          sidebar: { hidden: true },
          breadcrumb: [
            REFERENCE,
            { label: 'Error codes', href: '/reference/errors/' },
            {
              label: errorAreaLabel(def.area),
              href: `/reference/errors/#${errorAreaLabel(def.area)
                .toLowerCase()
                .replace(/[^a-z0-9]+/g, '-')}`,
            },
          ],
        },
        renderErrorPage(
          c,
          def,
          origin,
          Object.values(recordings)
            .flat()
            .find((e) => (e.response.body as { code?: string } | null)?.code === c),
        ),
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
