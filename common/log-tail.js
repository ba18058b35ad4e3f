// What a dead process's log says about its death, in a few lines: a Go panic
// (toxiproxy-server) with the frame it happened in, a Node uncaught error, or else
// the log's last lines. Plain ES module: the CLI (lib/processes.js) and k6's
// setup() (scenarios/lib/network.js) show the same lines.

// The lines that say what went wrong (at most `max`), or [] for an empty log.
export function deathLines(text, max = 3) {
  const lines = String(text || '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  // A Go runtime death: a panic, a fatal error, or a fatal signal's dump (SIGABRT: abort).
  const panic = lines.findIndex((l) => /^(panic: |fatal error: |SIG[A-Z]+: )/.test(l));
  if (panic !== -1) {
    // panic: ...; goroutine N [running]:; pkg.(*Type).Func(...); file.go:line
    const frame = lines.slice(panic + 1).find((l) => /\.go:\d+/.test(l));
    const where = lines.slice(panic + 1).find((l) => /^[\w./*()-]+\(/.test(l));
    return [lines[panic], where, frame].filter(Boolean).slice(0, max);
  }
  const error = lines.findLast((l) => /^[\w.]*Error(\s*\[[\w_]+\])?: /.test(l));
  if (error) return [error];
  // Routine log lines (toxiproxy's JSON at trace/debug/info) say nothing about a death.
  return lines.filter((l) => !/^\{.*"level":"(trace|debug|info)"/.test(l)).slice(-max);
}

// The same as one line, for one-line errors.
export const deathLine = (text, max = 3) => deathLines(text, max).join(' | ');
