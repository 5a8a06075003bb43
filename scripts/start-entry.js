// `npm start`'s entry, plain JavaScript so that Node's compile cache is on before the first
// TypeScript module loads (as bin/flowport.js does for the CLI). With the cache warm from an
// earlier start, Node does not load its TypeScript stripper, a WebAssembly module that would stay
// in the server's memory for its lifetime (about 20 MB of RSS; issue 31 goal 6, ADR 1330).
// NODE_DISABLE_COMPILE_CACHE=1 turns the cache off.
import module from 'node:module';

module.enableCompileCache?.();
await import('./start.ts');
