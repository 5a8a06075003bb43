// CPU time of processes from Linux /proc, for benchmarks that judge a server by the CPU it spends
// per unit of work (the load generator shares the cores, so its rate alone misleads).
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** A process's /proc stat fields after the parenthesised command name (state is [0], ppid [1], utime [11], stime [12]). */
function statFields(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(') ') + 2).split(' ');
  } catch {
    return null;
  }
}

/** User + system CPU seconds a process (all its threads) has used so far; null when it is gone or not Linux. */
export function processCpuSeconds(pid: number): number | null {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / TICKS : null;
}

/** Resident set size of a process in bytes (/proc/<pid>/status VmRSS); null when it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds of `root` and every process whose parent it is, by pid (a PostgreSQL cluster: postmaster and backends). */
export function familyCpu(root: number): Map<number, number> {
  const out = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  for (const p of pids) {
    const pid = Number(p);
    const f = statFields(pid);
    if (!f || (pid !== root && Number(f[1]) !== root)) continue;
    out.set(pid, (Number(f[11]) + Number(f[12])) / TICKS);
  }
  return out;
}

/**
 * CPU seconds the family used between two familyCpu() samples: a process that started in between
 * counts whole; one that exited in between is lost (its last ticks cannot be read).
 */
export function familyDelta(before: Map<number, number>, after: Map<number, number>): number {
  let s = 0;
  for (const [pid, t] of after) s += t - (before.get(pid) ?? 0);
  return s;
}

/**
 * The PostgreSQL postmaster's pid when the server at `url` runs on this machine (its backend's parent,
 * read from /proc); null when it runs elsewhere (a container, another host).
 */
export async function localPostmasterPid(url: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const backend = Number(rows[0]?.pid);
    const f = statFields(backend);
    // The backend must be a postgres process we can see (same pid namespace).
    if (!f) return null;
    const comm = readFileSync(`/proc/${backend}/comm`, 'utf8').trim();
    return comm.startsWith('postgres') ? Number(f[1]) : null;
  } catch {
    return null;
  } finally {
    await client.end();
  }
}

/** `load average 1.23 0.98 0.80 (2 CPUs)`: printed at the start of every benchmark. */
export function loadLine(cpus: number): string {
  return `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} (${cpus} CPUs)`;
}
