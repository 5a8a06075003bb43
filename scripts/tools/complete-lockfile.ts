// Adds lockfile entries for platform-specific optional packages that this registry mirror does not
// carry (it serves linux-x64 builds only). `npm install` silently drops an optional dependency it
// cannot fetch, and `npm ci` then refuses the lockfile as out of sync. Each added entry carries the
// platform fields (os, cpu, libc) so npm skips it on this machine without fetching it.
// Run after any `npm install`: `node scripts/tools/complete-lockfile.ts` (see docs/adr/0006).
import { readFileSync, writeFileSync } from 'node:fs';

type Entry = {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  optionalDependencies?: Record<string, string>;
};

const OS: Record<string, string> = {
  android: 'android',
  darwin: 'darwin',
  linux: 'linux',
  freebsd: 'freebsd',
  win32: 'win32',
  windows: 'win32',
  openharmony: 'openharmony',
  sunos: 'sunos',
  aix: 'aix',
  netbsd: 'netbsd',
  openbsd: 'openbsd',
};
const CPU = ['arm64', 'x64', 'arm', 'ia32', 'wasm32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el'];

/** Derives `{ os, cpu, libc }` from a platform package name such as `@biomejs/cli-linux-arm64-musl`. */
export function platformOf(name: string): Pick<Entry, 'os' | 'cpu' | 'libc'> | null {
  const parts = name.split('/').pop()?.split('-') ?? [];
  const cpu = parts.find((p) => CPU.includes(p));
  if (!cpu) return null;
  if (cpu === 'wasm32') return { cpu: ['wasm32'] };
  const osPart = parts.find((p) => p in OS);
  if (!osPart) return null;
  const out: Pick<Entry, 'os' | 'cpu' | 'libc'> = { os: [OS[osPart] as string], cpu: [cpu] };
  if (osPart === 'linux') out.libc = [parts.includes('musl') ? 'musl' : 'glibc'];
  return out;
}

const file = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages: Record<string, Entry> };
const added: string[] = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    // npm resolves a dependency next to its parent or in any ancestor node_modules folder.
    let dir = path;
    let found = false;
    for (;;) {
      const candidate = dir ? `${dir}/node_modules/${dep}` : `node_modules/${dep}`;
      if (lock.packages[candidate]) {
        found = true;
        break;
      }
      if (!dir) break;
      const cut = dir.lastIndexOf('/node_modules/');
      dir = cut === -1 ? '' : dir.slice(0, cut);
    }
    if (found) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(spec)) continue;
    const key = `node_modules/${dep}`;
    lock.packages[key] = { version: spec, ...(entry.dev ? { dev: true } : {}), optional: true, ...platform };
    added.push(`${dep}@${spec}`);
  }
}
const sorted: Record<string, Entry> = {};
for (const key of Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1))) {
  sorted[key] = lock.packages[key] as Entry;
}
lock.packages = sorted;
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length ? `added ${added.length} platform entries:\n  ${added.join('\n  ')}` : 'lockfile complete');
