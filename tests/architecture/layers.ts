// The floors of api/src, bottom to top, and where code belongs (docs/architecture.md).
// A file may import from its own floor and the floors below it, never above.
// tests/architecture/layers.test.ts checks every import against this table.
import { areaOf, type ImportEdge } from '../helpers/import-graph.ts';

export interface Floor {
  name: string;
  /** Top-level areas of api/src on this floor (a folder, or a file without `.ts`). */
  areas: readonly string[];
  /** What lives here, said in a failure message that points code to this floor. */
  holds: string;
}

export const FLOORS: readonly Floor[] = [
  {
    name: 'foundation',
    areas: ['lib', 'ids', 'config', 'docs-paths', 'plans', 'errors', 'entry-points'],
    holds:
      'configuration, ids, the error catalog, docs paths, plans, where a human acts (entry-points: the CLI invocation, the merchant page, who creates grants) and small helpers (api/src/lib/)',
  },
  {
    name: 'store',
    areas: ['store', 'audit', 'observability'],
    holds:
      'SQL access, migrations, the group committer, the audit log, and the metrics registry and logger (api/src/observability/)',
  },
  {
    name: 'core',
    areas: ['core'],
    holds: 'the shared context types: Principal, Services, OperationContext, Guard, Admission, Operation',
  },
  {
    name: 'domain',
    areas: ['services', 'usage', 'auth', 'oauth', 'merchant', 'reads', 'handoff', 'intake', 'intents'],
    holds:
      "the service verbs and domain logic (services, usage, auth, reads, handoff, intake, intents), the Shopify app's verbs (merchant: install, uninstall, privacy requests, merchant sessions and grants) and the OAuth authorization server (oauth)",
  },
  { name: 'operations', areas: ['operations'], holds: 'the operation contracts, each a call into a service verb' },
  {
    name: 'surfaces',
    areas: ['http', 'mcp', 'shopify', 'sandbox'],
    holds: 'HTTP apps and middleware (api/src/http/), the MCP endpoint (api/src/mcp/), Shopify webhooks, the sandbox',
  },
  { name: 'app', areas: ['runtime', 'main'], holds: 'wiring a process together (api/src/runtime.ts, api/src/main.ts)' },
  { name: 'cli', areas: ['cli'], holds: 'the command line: agent, helper and operator commands (api/src/cli/)' },
];

/**
 * Packages that make code transport-bound: nothing below the operations imports them, not even a
 * type (operations may use @hono/zod-openapi for their schemas; the surfaces use them all).
 */
export const TRANSPORT_PACKAGES = /^(hono(\/|$)|@hono\/|@modelcontextprotocol\/)/;

/** Surfaces that must not depend on each other: importer → areas it may not import. */
export const SURFACE_BANS: Record<string, readonly string[]> = {
  http: ['mcp', 'cli', 'sandbox'],
  mcp: ['cli', 'sandbox'],
  shopify: ['mcp', 'cli', 'sandbox'],
  sandbox: ['http', 'mcp', 'cli', 'shopify'],
};

export function floorOf(area: string): { index: number; floor: Floor } | null {
  const index = FLOORS.findIndex((f) => f.areas.includes(area));
  return index === -1 ? null : { index, floor: FLOORS[index] as Floor };
}

const where = (e: ImportEdge) => `api/src/${e.from}:${e.line} imports ${e.external ? e.to : `api/src/${e.to}`}`;

/** What is wrong with one import, as a message that says where the code belongs; null when it is fine. */
export function violation(e: ImportEdge): string | null {
  const from = areaOf(e.from);
  const own = floorOf(from);
  if (!own) return `${where(e)}: api/src/${from} is on no floor. Add it to FLOORS in tests/architecture/layers.ts.`;
  if (e.external) {
    const contractFloor = floorOf('operations')?.index ?? 0;
    if (
      TRANSPORT_PACKAGES.test(e.to) &&
      (own.index < contractFloor || (own.index === contractFloor && e.to !== '@hono/zod-openapi'))
    )
      return `${where(e)}: ${from} is on the ${own.floor.name} floor, which is transport-free. A Hono route or app belongs in api/src/http/ (an MCP piece in api/src/mcp/) and calls down into ${from}; keep ${from} to ${own.floor.holds}.`;
    return null;
  }
  const to = areaOf(e.to);
  const target = floorOf(to);
  if (!target) return `${where(e)}: api/src/${to} is on no floor. Add it to FLOORS in tests/architecture/layers.ts.`;
  if (target.index > own.index)
    return `${where(e)}: ${from} is on the ${own.floor.name} floor and ${to} on the ${target.floor.name} floor above it. Code on a floor imports only from its own floor and those below. Either move what ${e.from} needs from ${e.to} down to the ${own.floor.name} floor or below (the ${own.floor.name} floor holds ${own.floor.holds}), or move the code that needs it up to the ${target.floor.name} floor, which holds ${target.floor.holds}.`;
  if (SURFACE_BANS[from]?.includes(to))
    return `${where(e)}: the ${from} surface must not depend on the ${to} surface. Both call down into operations and services: move the shared piece down (api/src/operations/, the domain or api/src/errors/).`;
  if (from === 'core' && !e.typeOnly)
    return `${where(e)}: api/src/core holds types only (erased at run time). Put the value in the foundation floor (${FLOORS[0]?.holds}).`;
  return null;
}
