// `npm start`'s entry, plain JavaScript so that Node's compile cache is on before the first
// TypeScript module loads (as bin/flowport.js does for the CLI). With the cache warm from an
// earlier start, Node does not load its TypeScript stripper, a WebAssembly module that would stay
// in the server's memory for its lifetime (about 20 MB of RSS; issue 31 goal 6, ADR 1330).
// NODE_DISABLE_COMPILE_CACHE=1 turns the cache off.
//
// The environment in scripts/start-env.js must be there when the process starts (glibc reads
// MALLOC_ARENA_MAX then): on Linux, when a variable is missing, the entry first replaces itself
// (execve: the same process id, so signals and exit codes are npm's as before) with itself and the
// variable set. A value the operator set is kept.
import module from 'node:module';
import { START_ENV } from './start-env.js';

const missing = Object.entries(START_ENV).filter(([name]) => process.env[name] === undefined);
if (missing.length && process.platform === 'linux' && typeof process.execve === 'function') {
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      ...Object.fromEntries(missing),
    });
  } catch (err) {
    // The settings save memory; a server that cannot re-execute (a sandbox refusing execve)
    // still starts, without them.
    console.error(`npm start: running without ${missing.map(([name]) => name).join(', ')}: ${err}`);
  }
}
module.enableCompileCache?.();
await import('./start.ts');
