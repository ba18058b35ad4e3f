#!/usr/bin/env node
// k6pack: the embedded stack (servers + toxiproxy as plain processes) and the
// commands around it. `k6pack --help` lists them.
import { Command } from 'commander';
import { installTools, ToolError } from '../lib/tools.js';

const program = new Command('k6pack')
  .description('GraphQL over HTTP/WS vs gRPC load-testing pack: stack, profiles, runs')
  .showHelpAfterError();

program
  .command('tools')
  .description('install k6 v1.8.1 and toxiproxy-server v2.5.0 (+handshake toxic) into .tools/bin')
  .action(() => installTools());

try {
  await program.parseAsync();
} catch (err) {
  if (err instanceof ToolError) {
    console.error(`k6pack: ${err.message}`);
    process.exit(1);
  }
  throw err;
}
