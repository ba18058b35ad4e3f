// The nightly soak's plan (scenarios/soak.js runs it).
import { setting } from '../../common/settings.js';
import { byLevel, levelName } from '../../common/schedule.js';
import { DEFAULT_COLUMNS, lane, rttOf } from '../../common/scenario.js';
import { BOOK_OP } from './ws-vs-http.js';

// Whether `npx k6pack gate` runs this scenario, and at which load level (lib/specs.js
// specGate; --scenarios and --load override).
export const GATE = {
  runs: false,
  why: 'it runs for SOAK_DURATION (1 h by default): the nightly soak, not a pull request',
};

export default function declare(settings) {
  const level = levelName(settings, 'soak');
  const WS_OPS = setting(settings, 'WS_SOAK_OPS');
  const SAMPLE_SECONDS = setting(settings, 'SAMPLE_SECONDS', byLevel(level, { smoke: 1, ci: 5, full: 15 }, 30));
  const parts = [{ part: 'first' }, { part: 'last' }];
  // At the soak's arrival rates a kept connection sits idle longer than TCP's
  // retransmission timeout between operations, so each starts on a restarted
  // window (idle: answers this small fit in it anyway).
  const op =
    (more = {}) =>
    () => ({ ...BOOK_OP, idle: true, ...more });
  return {
    WS_OPS,
    SAMPLE_SECONDS,
    name: 'soak',
    defaultProfile: 'lte',
    level: 'soak',
    mix: true,
    lanes: [
      lane('http_keepalive', { dims: parts, model: op() }),
      lane('http2', { dims: parts, model: op() }),
      lane('ws', { dims: parts, model: op({ conn: 'warm' }) }),
      lane('grpc', { dims: parts, model: op({ reqBytes: 20, resBytes: 120 }) }),
      // One VU, so the baseline it keeps is the run's.
      { name: 'memory', exec: 'sampleMemory', tags: {}, rate: 1, timeUnit: `${SAMPLE_SECONDS}s`, maxVUs: 1 },
    ],
    laneSeconds: (name, profile) => ((name === 'ws' ? WS_OPS + 3 : 2) * rttOf(profile)) / 1000 + 0.1,
    columns: [
      ...DEFAULT_COLUMNS.filter((c) => c.title !== 'server p50'),
      { title: 'drift p50', metric: 'op_drift', stat: 'med', unit: 'x' },
    ],
    verdict: { where: { part: 'first' } },
    observe: ['graphql', 'grpc'].flatMap((server) => [
      `server_rss_bytes{server:${server}}`,
      `server_rss_growth{server:${server}}`,
      `server_heap_bytes{server:${server}}`,
    ]),
  };
}
