#!/usr/bin/env node
// npm's bin entry: `npx flowport …` runs with the project's pinned Node (24),
// which executes the TypeScript CLI directly.
import { runCli } from '../api/src/cli/main.ts';

process.exitCode = await runCli(process.argv.slice(2), {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
  env: process.env,
});
