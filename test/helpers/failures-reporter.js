// A node:test reporter that writes one JSON line per failed test: its file, line, name and
// the first lines of its error. test/run.js runs it beside the spec reporter and prints the
// lines after the last phase, so the last lines of a long log (all a CI page may show)
// say which test failed and why, not only that one did.
const MAX_CHARS = 1500;

function messageOf(error) {
  // A failed test's error is wrapped (code ERR_TEST_FAILURE) around the assertion's.
  const e = error && error.cause ? error.cause : error;
  const text = e && (e.stack || e.message) ? String(e.message || e.stack) : String(e);
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)} …` : text;
}

export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, line, details } = event.data;
    // A suite fails when a test in it does: its own line adds nothing but its name.
    if (details && details.type === 'suite') continue;
    yield `${JSON.stringify({ file, line, name, error: messageOf(details && details.error) })}\n`;
  }
}
