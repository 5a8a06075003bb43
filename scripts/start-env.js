// Environment `npm start` runs the server with (scripts/start-entry.js), and the benchmarks too
// (scripts/lib/bench-flowport.ts). Plain JavaScript: the entry reads it before any TypeScript loads.
//
// MALLOC_ARENA_MAX=2: glibc gives threads that allocate at once their own malloc arenas, up to
// 8 per core, and the server's threads (the event loop, libuv's pool, SQLite's WAL sync and
// checkpoints) each keep one. Two arenas held RSS at 185 MB against 204 MB in 150 s soaks at about
// 1,300 events/s (ADR 1330, docs/benchmarks.md). glibc reads it only at process start.
export const START_ENV = { MALLOC_ARENA_MAX: '2' };
