#!/usr/bin/env node
// npm's bin entry: `npx flowport …` runs with the project's pinned Node (24),
// which executes the TypeScript CLI directly. The compile cache keeps Node's
// type-stripped and compiled modules between runs (in the system's temp
// directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so a command does not
// pay for stripping types on every start (`npm run bench:cli`, ADR 0900).
import module from 'node:module';

module.enableCompileCache?.();
const { processIO } = await import('../api/src/cli/io.ts');
const { runCli } = await import('../api/src/cli/main.ts');

process.exitCode = await runCli(process.argv.slice(2), processIO());
