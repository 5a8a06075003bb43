// Summarises V8 .cpuprofile files (node --cpu-prof): self time by function, largest first, as
// µs per unit of work (e.g. per accepted event) when `per` is given. Used by bench:intake's
// BENCH_CPU_PROF option; also runnable: node scripts/lib/profile-summary.ts <file> [units] [top].
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function selfTimes(file: string): { name: string; us: number }[] {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i] as number);
    if (!n) continue;
    const f = n.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\/(node_modules|api\/src)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const name = `${f.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    totals.set(name, (totals.get(name) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return [...totals].map(([name, us]) => ({ name, us })).sort((a, b) => b.us - a.us);
}

if (import.meta.main) {
  const [file, units = '1', top = '30'] = process.argv.slice(2);
  const rows = selfTimes(file as string);
  const total = rows.filter((r) => r.name !== '(idle)').reduce((a, r) => a + r.us, 0);
  console.log(`busy (not idle): ${(total / Number(units)).toFixed(1)} µs per unit`);
  const per = Number(units);
  for (const r of rows.filter((x) => x.name !== '(idle)').slice(0, Number(top)))
    console.log(
      `${(r.us / per).toFixed(2).padStart(8)} µs  ${((100 * r.us) / total).toFixed(1).padStart(5)}%  ${r.name}`,
    );
}
