// Error areas (ErrorDef.area) as readable labels: headings of the error index, sidebar groups
// and breadcrumbs of the error pages. No imports, so the docs site's route middleware can use it.
const AREA_LABELS: Record<string, string> = {
  api: 'API',
  mcp: 'MCP',
  auth: 'Auth and grants',
  intent: 'Action intents',
};

/** `intake` → `Intake`, `api` → `API`. */
export function errorAreaLabel(area: string): string {
  return AREA_LABELS[area] ?? `${area[0]?.toUpperCase()}${area.slice(1)}`;
}
