// Probe for test/faults-ws.test.js: the WebSocket session's deadlines and the
// silent-VU gate (scenarios/lib/sessions.js, silent-vus.js), with the pack's own
// scenario plumbing (defineScenario; THRESHOLDS must name a policy file with a
// "ws-probe" scenario). One VU per step unless STEPS says otherwise.
//   -e MODE=stall   lane stall: a session against STALL_WS_URL (a listener that
//                   never answers the upgrade), so its iteration holds a
//                   connecting socket when the step ends; then lane ws, on the
//                   same VU, against the GraphQL server.
//   -e MODE=silent  lane ws; in step ws_c2 the VU with id 2 records nothing
//                   (as a wedged VU would), which silent_vus must catch.
// Counter stall_sessions_done: stall sessions whose function returned (their
// iteration then waits for the connecting socket until k6 cuts it).
import exec from 'k6/execution';
import { sleep } from 'k6';
import { Counter } from 'k6/metrics';
import { remainingMs } from '../../scenarios/lib/load.js';
import { bookOperation } from '../../scenarios/lib/queries.js';
import { lane } from '../../common/scenario.js';
import { defineScenario } from '../../scenarios/lib/scenario.js';
import { wsSession } from '../../scenarios/lib/sessions.js';

const MODE = __ENV.MODE || 'stall';
const lanes = [
  ...(MODE === 'stall' ? [lane('stall', { on: 'ws', vuCheck: true })] : []),
  lane('ws', { vuCheck: true }),
];

const s = defineScenario({ name: 'ws-probe', defaultProfile: 'lan', lanes, iterationSeconds: () => 1, level: 'smoke' });
export const { options, setup, teardown, handleSummary } = s;
const stallSessionsDone = new Counter('stall_sessions_done');
// How long the stall iteration really lasted (k6 reports a sub-metric only with a threshold).
if (MODE === 'stall') options.thresholds['iteration_duration{scenario:stall_c1}'] = ['max>=0'];

const op = (socket, i) => socket.execute(bookOperation(exec.vu.idInTest, i));

async function stall() {
  await wsSession({ tls: false, tags: {}, url: __ENV.STALL_WS_URL, timeoutMs: 60000, op });
  stallSessionsDone.add(1);
}

function ws() {
  if (MODE === 'silent' && exec.scenario.name === 'ws_c2' && exec.vu.idInTest === 2) {
    sleep(Math.max(0, remainingMs()) / 1000 + 0.05);
    return undefined;
  }
  return wsSession({ tls: false, tags: {}, op });
}

// The probe's one exec (scenarios/lib/scenario.js dispatch): both lanes are WebSockets.
export const runLane = s.dispatch({ ws: (l) => (l.name === 'stall' ? stall() : ws()) });
