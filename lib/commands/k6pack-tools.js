// `k6pack tools`: installs k6 v1.8.1 (only where none is on PATH) and the pack's
// toxiproxy-server build into .tools/bin (lib/tools.js).
import { action } from '../cli-support.js';
import { installTools } from '../tools.js';

export function register(program, ctx) {
  program
    .command('tools')
    .description('install k6 v1.8.1 and toxiproxy-server v2.5.0 (+ the link and handshake toxics) into .tools/bin')
    .action(action(() => (installTools(), 0)));
}
