// CPU time of processes from Linux /proc, for benchmarks that judge a server by the CPU it spends
// per unit of work (the load generator shares the cores, so its rate alone misleads).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
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

/**
 * CPU seconds a set of processes used between two samples (pid → CPU seconds): a process that started in between
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

/** Local TCP ports of a process's open sockets (/proc/<pid>/fd and /proc/net/tcp{,6}). */
export function localTcpPorts(pid: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1]) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is "HEXIP:HEXPORT"; the inode is the tenth field.
      if (f.length > 9 && inodes.has(f[9] as string)) ports.push(Number.parseInt((f[1] ?? '').split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/**
 * CPU seconds so far of the PostgreSQL server processes that work for `clientPid` (the backends
 * of its connections, found by their client ports in pg_stat_activity), and of the cluster's
 * WAL writer, checkpointer and background writer (shared with any other client of the cluster).
 * Other clients' backends are left out: the cluster may be shared.
 */
export async function pgServerCpu(
  admin: pg.Client,
  clientPid: number,
): Promise<{ backends: Map<number, number>; background: Map<number, number> }> {
  const ports = localTcpPorts(clientPid);
  const { rows } = await admin.query<{ pid: number; kind: string }>(
    `SELECT pid, CASE WHEN client_port = ANY($1::int[]) THEN 'mine' ELSE 'background' END AS kind
       FROM pg_stat_activity
      WHERE client_port = ANY($1::int[]) OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`,
    [ports],
  );
  const backends = new Map<number, number>();
  const background = new Map<number, number>();
  for (const r of rows) {
    const t = processCpuSeconds(Number(r.pid));
    if (t !== null) (r.kind === 'mine' ? backends : background).set(Number(r.pid), t);
  }
  return { backends, background };
}
