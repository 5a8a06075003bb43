#!/usr/bin/env node
// npm's bin entry: `npx flowport …` runs with the project's pinned Node (24),
// which executes the TypeScript CLI directly.
import { processIO } from '../api/src/cli/io.ts';
import { runCli } from '../api/src/cli/main.ts';

process.exitCode = await runCli(process.argv.slice(2), processIO());
