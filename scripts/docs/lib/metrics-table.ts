// The metrics page's table: every series this process registers, from the Metrics class itself
// (name, type, labels, help), so the page cannot drift from what /metrics serves.
import { Metrics } from '../../../api/src/observability/metrics.ts';
import type { Db } from '../../../api/src/store/db.ts';

export function renderMetricsTable(): string {
  // Registering touches no store: collect() runs only on a scrape.
  const m = new Metrics(null as unknown as Db, { defaultMetrics: false });
  const rows = m.registry.getMetricsAsArray().map((metric) => {
    const x = metric as unknown as { name: string; help: string; type?: string; labelNames?: readonly string[] };
    const labels = x.name === m.http.name ? ['route', 'method', 'status_class'] : [...(x.labelNames ?? [])];
    return `| \`${x.name}\` | ${x.type ?? 'histogram'} | ${labels.map((l) => `\`${l}\``).join(', ') || '—'} | ${x.help} |`;
  });
  return ['| Series | Type | Labels | What it counts |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
