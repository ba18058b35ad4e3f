// Load levels and the schedule of a scenario's k6 scenarios (options.scenarios: which
// lane runs when, how long, with how many VUs), in one place, picked with
// -e LOAD=smoke|ci|full|soak. Plain ES module: k6 (scenarios/lib/scenario.js) and
// Node (`k6pack thresholds`, tests over every spec) build the same schedules.
//
// A scenario's spec (scenarios/specs/) lists its lanes (one transport/variant each);
// schedule(lanes) builds options.scenarios:
//   stepped levels (smoke, ci, full): every lane runs alone, one after another
//     (startTime computed from the durations), so transports never compete for
//     CPU; inside a lane concurrency rises step by step, each step a k6
//     scenario of its own (constant-vus) named <lane>_<step> and tagged
//     step:c10 (10 VUs, one connection each), so every step has its own numbers.
//   mix level (soak): every lane at a constant arrival rate, all at once, for
//     SOAK_DURATION (default 1h): a day-long mix, with dropped_iterations
//     counted when the VU pool cannot keep up.
// Overrides for exploring: -e STEPS=1,10,50 -e STEP_SECONDS=20 -e SOAK_DURATION=15m -e SOAK_RATE=5.
// -e STEP_ITERATIONS=N makes every step a fixed amount of work instead of a fixed
// time: shared-iterations, N iterations per VU (N x VUs per step), capped at the
// step's duration. The iteration count is then exact and splits exactly between
// --execution-segment instances (lanes whose iteration is a timed session, such
// as a WebSocket kept for the whole step, are still bounded by the step's time).
import { SETTINGS, rawSetting, setting } from './settings.js';

export const LEVELS = {
  // What tests use: seconds, one VU. Its runs check the pack's plumbing, not a server's
  // speed: every row is gated, whatever it rests on (common/gates.js SAMPLE_FLOORS).
  smoke: { kind: 'stepped', steps: [1], stepSeconds: 3, gracefulSeconds: 1, minIterations: 1, plumbing: true },
  // A scenario's quick look at both concurrencies: each scenario about 14 s in total
  // (stepSeconds comes from the budget, unless a lane needs longer steps for its own
  // minimum; k6 takes no step under 1 s), 10 s on a link with no delay (lan: an
  // operation takes milliseconds, so a short step holds hundreds). A row is gated where
  // its step holds enough operations (common/gates.js SAMPLE_FLOORS): under a slow link
  // most c1 rows hold a handful and only measure.
  ci: {
    kind: 'stepped',
    steps: [1, 4],
    budgetSeconds: 14,
    gracefulSeconds: 0.3,
    minStepSeconds: 1,
    minIterations: 1,
    // A scenario whose iterations take long even there (hints.noDelayBudget false:
    // compound-vs-parallel's documents, serialization's large N) keeps the budget.
    noDelay: { budgetSeconds: 10 },
  },
  // The PR gate (`k6pack gate`'s load): what ci runs, at one concurrency, 4 VUs (a
  // scenario's own steps at ci where it names them: fan-out's subscribers, study 001's
  // and 002's one VU), each step as long as its gates need (gateStep: 100 operations for
  // a p95 within p95CapSeconds, else 20 for a p50 within capSeconds, else the shortest
  // step, which only measures). Four VUs hold four times the operations of one in the
  // same seconds, so every lane is gated on enough of them and seven scenarios under lan
  // and lte fit in 4 minutes (bench/gate.js).
  gate: {
    kind: 'stepped',
    like: 'ci',
    steps: [4],
    stepSeconds: 1,
    gracefulSeconds: 0.3,
    minStepSeconds: 1,
    minIterations: 1,
    gateSized: { capSeconds: 4, p95CapSeconds: 3 },
  },
  // The study: 1 -> 10 -> 50 -> 200 VUs (or connections), held long enough per step to measure.
  full: { kind: 'stepped', steps: [1, 10, 50, 200], stepSeconds: 30, gracefulSeconds: 10, minIterations: 2 },
  // Nightly: a constant-arrival-rate mix of every lane.
  soak: { kind: 'mix', durationSeconds: 3600, rate: 2, gracefulSeconds: 30 },
};

// The open workload (WORKLOAD=open, `--workload open`): every lane steps through
// rising arrival rates instead of VUs, each step a stated share of what `connections`
// connections can do, one after another, when each does one iteration at a time
// (a lane's iteration time comes from the round-trip model: common/scenario.js).
// A closed model sends less when the server slows (each VU waits for its answer),
// which hides the queue a real user would meet (coordinated omission); an open one
// keeps arriving, so the queue shows in the latency and in dropped_iterations.
export const OPEN = {
  smoke: { connections: 1, shares: [50] },
  ci: { connections: 4, shares: [50, 90] },
  full: { connections: 50, shares: [10, 50, 90, 150] },
};
export const WORKLOADS = SETTINGS.WORKLOAD.values;

export const workloadOf = (env) => setting(env, 'WORKLOAD');

// How long a mix runs at the stepped levels (soak.js is a mix at every level).
const MIX_AT = {
  smoke: { durationSeconds: 12, rate: 2, gracefulSeconds: 2 },
  ci: { durationSeconds: 60, rate: 2, gracefulSeconds: 5 },
  full: { durationSeconds: 600, rate: 5, gracefulSeconds: 10 },
};

export const levelName = (env, fallback = 'ci') => setting(env, 'LOAD', fallback);

// A value that depends on the level: byLevel(level, { smoke: [100], ci: [100, 1000] }, fallback).
// A level that is like another (gate: ci) takes that one's value when it has none of its own.
export function byLevel(name, values, fallback) {
  if (name in values) return values[name];
  const like = LEVELS[name]?.like;
  return like && like in values ? values[like] : fallback;
}

const round1 = (x) => Math.round(x * 10) / 10;
const ceil1 = (x) => Math.ceil(x * 10 - 1e-9) / 10;

// How late k6 starts an arrival after its due time: 0-8 ms (max over 250 arrivals at
// 50/s and 2,500 at 500/s, constant-arrival-rate, on the pack's 2-core machine at load
// ~2; k6 v1.8.1). An arrival that starts late ends late: it holds its VU that much longer.
export const ARRIVAL_LATE_SECONDS = 0.01;

// The VUs an open step needs so that k6 never finds its pool empty while the step keeps
// up: `perSecond` arrivals a second, evenly spaced, each holding its VU at most
// `worstSeconds` (the lane's worst iteration: common/scenario.js) plus how late k6 may
// start it. A window of that length holds floor(rate x length) + 1 arrivals (one at
// each end), and one VU more is the one whose iteration just ended but which k6 has
// not yet taken back (its goroutine goes back to the queue after the iteration). k6
// v1.8.1 drops an arrival that finds no free VU, and only then starts one VU beyond
// preAllocatedVUs (lib/executor constant_arrival_rate.go): so the pre-allocated pool,
// not maxVUs, is what must cover the worst case.
export function openPool(perSecond, worstSeconds) {
  return Math.floor(perSecond * (worstSeconds + ARRIVAL_LATE_SECONDS) + 1e-9) + 2;
}

// The share of the cores' modelled capacity that an open step's 100 % stands for. The
// model's CPU terms were fitted at the knees (bench/scale.js), where the machine saturates,
// and the calibration reads a CPU second within -5 %..+50 % of itself on a quiet machine:
// at 90 % of the full capacity, 5 of the 30 lan o90 lane-steps in five runs of
// `bench/open-workload.js` fell behind on unchanged code (2026-11-26, c310091: http
// keep-alive at 1497/s, HTTP/2 at 782/s, dropped arrivals; http fresh at 545-719/s, p95
// 73-87 ms against 65-80), every one of them in a run whose calibration read the machine
// at the reference's speed; in the three runs that read it ~25 % slower (90 % of the
// capacity / 1.25, about 0.7 of it) every keep-alive and HTTP/2 step held. 0.7 keeps the
// o90 step at 63 % of the capacity when the calibration reads fast. At ci load (4
// connections) every shaped profile's link bounds the rate first; at full load (50)
// the CPU also binds the fresh TLS lanes under lte.
export const OPEN_CPU_CEILING = 0.7;

// The shortest open step on a link with no delay (lan). k6 hands a step's arrivals to
// its pre-allocated VUs in turn, so every VU of the pool opens its connection within the
// step's first arrivals: under lan at 1 s steps that burst was 45 TLS set-ups among 547
// HTTP/2 arrivals (8 %), and the step's p95 was the burst's (94 ms against 70, 1 run of 5:
// bench/open-workload.js, 2026-11-26, 48f94ae). At 3 s it is under 3 % of the step,
// below its p95. Shaped links ask for tens of arrivals a second from a few VUs.
export const OPEN_NO_DELAY_STEP_SECONDS = 3;

// The k6 scenario of one open step: `share` % of `connections` connections' worth of
// arrivals, a lane's iteration taking `iterationSeconds` (the model's median: the
// rate's unit). The VU pool is sized for the lane's worst case: `worstSeconds(inFlight)`
// is the longest an iteration may take while its step keeps up (a connection's first
// operation paying its set-up, within the policy's p95 margins: common/scenario.js
// worstIterationSeconds), default the median iteration. maxVUs leaves room for the
// median latency to grow fourfold; every VU k6 adds beyond the pre-allocated ones costs
// it a dropped arrival first, counted against the step (common/gates.js droppedGates).
// cpu: { seconds (the iteration's CPU, common/scenario.js), cores, cpuScale }: the
// connections share the machine's cores, so what they can do is at most cores / CPU
// per iteration (the utilization law; under lan, where an iteration is all CPU, 4
// connections on 2 cores do what 2 would), of which a step asks at most
// OPEN_CPU_CEILING.
export function openStep(share, connections, iterationSeconds, stepSeconds, worstSeconds, cpu) {
  const byLink = connections / Math.max(iterationSeconds, 0.001);
  const byCpu = cpu && cpu.seconds > 0 ? (OPEN_CPU_CEILING * cpu.cores) / (cpu.seconds * cpu.cpuScale) : Infinity;
  const perSecond = (share / 100) * Math.min(byLink, byCpu);
  const perMinute = Math.max(1, Math.round(perSecond * 60));
  const inFlight = (perMinute / 60) * iterationSeconds;
  const worst = Math.max(iterationSeconds, worstSeconds ? worstSeconds(Math.max(1, inFlight)) : 0);
  const preAllocatedVUs = Math.min(1000, Math.max(openPool(perMinute / 60, worst), Math.ceil(inFlight) + 1));
  return {
    executor: 'constant-arrival-rate',
    rate: perMinute,
    timeUnit: '1m',
    duration: `${stepSeconds}s`,
    preAllocatedVUs,
    maxVUs: Math.min(2000, Math.max(preAllocatedVUs, Math.ceil(inFlight * 4) + 2)),
    concurrency: Math.max(1, inFlight),
    worstSeconds: worst,
    cpuBound: byCpu < byLink,
  };
}

// A closed step of the gate's level, sized for what its gates need: long enough for its
// rows' p95 to rest on the p95 floor (common/gates.js SAMPLE_FLOORS) where that fits in
// p95CapSeconds, else for their p50's floor where that fits in capSeconds, else the shortest step the lane allows (`base`:
// the level's shortest, or its minimum iterations): a step that cannot hold a median's
// worth of operations within the cap is not gated (k6pack thresholds says so) and only
// measures, so a longer one would buy nothing. floorSeconds(lane, vus, which): the
// seconds the floor takes at the step's concurrency n (VUs, or what the lane counts:
// fan-out's subscribers).
// -> { seconds, why } (seconds 0: not sized here).
export function gateStep({ capSeconds, p95CapSeconds = capSeconds }, floorSeconds, lane, n, { base, baseWhy }) {
  const need95 = floorSeconds(lane, n, 'p95');
  if (!need95) return { seconds: 0 };
  const need50 = floorSeconds(lane, n, 'p50');
  const fmt = (x) => x.toFixed(1);
  if (need95 <= p95CapSeconds && need95 > base)
    return { seconds: ceil1(need95), why: `100 operations for its p95 gate (${fmt(need95)} s at its p50 budgets)` };
  if (need95 <= Math.max(p95CapSeconds, base))
    return { seconds: base, why: `${baseWhy}, which holds its p95 gate's 100 operations` };
  if (need50 <= capSeconds && need50 > base)
    return { seconds: ceil1(need50), why: `20 operations for its p50 gate (${fmt(need50)} s at its p50 budgets)` };
  if (need50 <= capSeconds) return { seconds: base, why: `${baseWhy}, which holds its p50 gate's 20 operations` };
  return {
    seconds: base,
    why: `${baseWhy}: its p50 gate's 20 operations take ${fmt(need50)} s at its p50 budgets, over the gate's ${capSeconds} s a step, so it is not gated and only measures`,
  };
}

// The ci level's shorter budget on a link with no delay, unless the scenario opts out.
const noDelayFits = (level, hints) => Boolean(level.noDelay) && hints.rttMs === 0 && hints.noDelayBudget !== false;

function steppedPlan(lanes, level, hints, env, open, load) {
  const steps = open ? open.shares : setting(env, 'STEPS', hints.steps || level.steps);
  const why = {}; // each k6 scenario's figures and where they come from (`k6pack plan`)
  const stepsWhy = open
    ? `${rawSetting(env, 'OPEN_SHARES') ? 'OPEN_SHARES' : `LOAD=${load}'s open shares`}: ${steps.join(', ')} %`
    : `${rawSetting(env, 'STEPS') ? 'STEPS' : hints.steps ? "the spec's steps" : `LOAD=${load}'s steps`}: ${steps.join(', ')}`;
  const concurrency = {};
  const pools = {}; // an open step's: { inFlight (at the median), worstSeconds (what sized its pool) }
  const fixedStep = setting(env, 'STEP_SECONDS', 0);
  const perVu = setting(env, 'STEP_ITERATIONS', 0);
  const durations = {};
  // ci: the scenario's budget split evenly over its lanes and steps.
  const { budgetSeconds, minStepSeconds: levelMinStep } = noDelayFits(level, hints)
    ? { ...level, ...level.noDelay }
    : level;
  const minStepSeconds = open && hints.rttMs === 0 ? Math.max(levelMinStep, OPEN_NO_DELAY_STEP_SECONDS) : levelMinStep;
  const slot = budgetSeconds ? round1(budgetSeconds / (lanes.length * steps.length)) : 0;

  const scenarios = {};
  let start = 0;
  let stepSeconds = 0;
  for (const lane of lanes) {
    // A lane may know its iterations are longer than the scenario's estimate.
    const iterationSeconds = lane.iterationSeconds || hints.iterationSeconds || 0;
    // gracefulStop lets the last iteration finish; a lane whose iterations end
    // themselves before the step does (remainingMs()) only needs time to close.
    const stopSeconds = hints.closeSeconds !== undefined ? hints.closeSeconds : iterationSeconds * 1.5;
    const gracefulSeconds = Math.max(level.gracefulSeconds, ceil1(stopSeconds));
    const levelStep = slot ? Math.max(minStepSeconds, round1(slot - gracefulSeconds)) : level.stepSeconds;
    // Every step long enough for minIterations iterations per VU.
    // A scenario whose iterations are one operation each asks for more (hints.minIterations).
    const minIterations = Math.max(level.minIterations, hints.minIterations || 0);
    const forIterations = ceil1(iterationSeconds * minIterations);
    // A scenario timed by the link's events (unstable) gives every step one event
    // period, its graceful stop included, so every step meets its event at the same point.
    const slotStep = hints.slotSeconds ? round1(hints.slotSeconds - gracefulSeconds) : 0;
    const laneStepSeconds = fixedStep || slotStep || Math.max(levelStep, forIterations);
    const durationWhy = fixedStep
      ? 'STEP_SECONDS'
      : slotStep
        ? `one period of the link's events (${hints.slotSeconds} s), less the graceful stop`
        : forIterations > levelStep
          ? `${minIterations} iteration${minIterations === 1 ? '' : 's'} of the model's ${iterationSeconds.toFixed(3)} s`
          : !slot
            ? `LOAD=${load}'s step`
            : levelStep > round1(slot - gracefulSeconds)
              ? `LOAD=${load}'s shortest step${minStepSeconds > levelMinStep ? ' for an open step with no delay' : ''} (its ${budgetSeconds} s / ${lanes.length * steps.length} steps, less the graceful stop, is shorter)`
              : `LOAD=${load}'s ${budgetSeconds} s${noDelayFits(level, hints) ? ' (a link with no delay)' : ''} / (${lanes.length} lane${lanes.length === 1 ? '' : 's'} x ${steps.length} step${steps.length === 1 ? '' : 's'}), less the graceful stop`;
    const gracefulWhy =
      ceil1(stopSeconds) <= level.gracefulSeconds
        ? `LOAD=${load}'s`
        : hints.closeSeconds !== undefined
          ? "the spec's time to close"
          : `1.5 x the model's ${iterationSeconds.toFixed(3)} s iteration`;
    for (const n of steps) {
      const step = open ? `o${n}` : `c${n}`;
      const name = `${lane.name}_${step}`;
      // The gate's level sizes each closed step for what its gates need (gateStep).
      const sized =
        level.gateSized && !fixedStep && !slotStep && !open && hints.floorSeconds
          ? gateStep(level.gateSized, hints.floorSeconds, lane, n, {
              base: Math.max(minStepSeconds, forIterations),
              baseWhy:
                forIterations > minStepSeconds
                  ? `${minIterations} iteration${minIterations === 1 ? '' : 's'} of the model's ${iterationSeconds.toFixed(3)} s`
                  : `LOAD=${load}'s shortest step`,
            })
          : null;
      stepSeconds = sized && sized.seconds ? sized.seconds : laneStepSeconds;
      const stepWhy = sized && sized.seconds ? sized.why : durationWhy;
      let work;
      if (open) {
        const {
          concurrency: inFlight,
          worstSeconds,
          cpuBound,
          ...rest
        } = openStep(
          n,
          open.connections,
          lane.openSeconds || iterationSeconds,
          stepSeconds,
          lane.openWorstSeconds,
          hints.machine && { seconds: lane.openCpuSeconds || 0, ...hints.machine },
        );
        work = rest;
        concurrency[name] = inFlight;
        pools[name] = { inFlight, worstSeconds };
        why[name] = {
          load: `${n} % of what ${open.connections} connections do (OPEN_CONNECTIONS; ${stepsWhy}), an iteration the model's ${(lane.openSeconds || iterationSeconds).toFixed(3)} s${cpuBound ? ', capped by the cores (CPU_CORES, CPU_SCALE)' : ''}; VUs for the worst iteration, ${worstSeconds.toFixed(3)} s`,
        };
      } else {
        // A step's concurrency is n; a lane may run it on fewer VUs (fanout: n
        // subscribers, many to a VU).
        const vus = lane.vus ? lane.vus(n) : n;
        why[name] = {
          load: `each step's concurrency (${stepsWhy})${lane.vus ? ", on the VUs the spec's lane needs for it" : ''}${perVu ? `; STEP_ITERATIONS=${perVu} per VU` : ''}`,
        };
        work = perVu
          ? { executor: 'shared-iterations', vus, iterations: vus * perVu, maxDuration: `${stepSeconds}s` }
          : { executor: 'constant-vus', vus, duration: `${stepSeconds}s` };
        concurrency[name] = n;
      }
      scenarios[name] = {
        ...work,
        exec: lane.exec,
        startTime: `${round1(start)}s`,
        gracefulStop: `${gracefulSeconds}s`,
        tags: { ...lane.tags, ...(lane.stepTags ? lane.stepTags(n) : {}), step },
      };
      durations[name] = stepSeconds * 1000;
      Object.assign(why[name], { duration: stepWhy, graceful: gracefulWhy });
      start += stepSeconds + gracefulSeconds;
    }
  }
  return {
    scenarios,
    durations,
    concurrency,
    ...(open ? { pools } : {}),
    why,
    totalSeconds: start,
    stepSeconds,
    steps: open ? steps.map((s) => `o${s}`) : steps,
  };
}

function mixPlan(lanes, level, name, env, levelWhy) {
  // SOAK_DURATION sets the soak level's length; the shorter levels keep theirs.
  const seconds = name === 'soak' ? setting(env, 'SOAK_DURATION', level.durationSeconds) : level.durationSeconds;
  const rate = setting(env, 'SOAK_RATE', level.rate);
  const scenarios = {};
  const durations = {};
  const concurrency = {};
  const why = {};
  const durationWhy = name === 'soak' ? `${levelWhy}'s (SOAK_DURATION)` : `${levelWhy}'s`;
  for (const lane of lanes) {
    const laneRate = lane.rate !== undefined ? lane.rate : rate;
    const name = `${lane.name}_mix`;
    const inFlight = Math.ceil(laneRate * Math.max(lane.iterationSeconds || 1, 0.5) * 2);
    scenarios[name] = {
      executor: 'constant-arrival-rate',
      exec: lane.exec,
      rate: laneRate,
      timeUnit: lane.timeUnit || '1s',
      duration: `${seconds}s`,
      preAllocatedVUs: lane.maxVUs || Math.min(inFlight, 100),
      maxVUs: lane.maxVUs || Math.min(inFlight * 4, 500),
      gracefulStop: `${level.gracefulSeconds}s`,
      tags: { ...lane.tags, step: 'mix' },
    };
    durations[name] = seconds * 1000;
    concurrency[name] = 1; // rates far below any step's concurrency
    why[name] = {
      load: `${lane.rate !== undefined ? "the spec's rate for this lane" : `${levelWhy}'s rate (SOAK_RATE)`}${lane.maxVUs ? "; the spec's VUs" : '; VUs for 2 x the iteration'}`,
      duration: durationWhy,
      graceful: `${levelWhy}'s`,
    };
  }
  return {
    scenarios,
    durations,
    concurrency,
    why,
    totalSeconds: seconds + level.gracefulSeconds,
    stepSeconds: seconds,
    steps: ['mix'],
  };
}

// lanes: [{ name, exec, tags: { transport, tls, ... }, iterationSeconds?,
//          vus(n)? (the VUs that run a step of concurrency n; default n),
//          stepTags(n)? (more tags for a step of concurrency n),
//          and in a mix: rate?, timeUnit?, maxVUs? }]
// hints: { iterationSeconds, steps } the expected length of one iteration under
//   the chosen profile (so a step holds at least two and gracefulStop lets the
//   last one finish; a lane's own iterationSeconds wins), and the scenario's
//   own concurrency steps when the level's do not suit it; rttMs, the link's round
//   trip (0 under lan: the ci level's noDelay budget, unless noDelayBudget is false).
// Soak-level mixes run every lane at once: that is the point of a mix.
// hints.mix: run the lanes as a mix at every level (soak.js).
// The plan's durations ({ k6 scenario: ms }) let an iteration stop its own loop
// before its step ends (scenarios/lib/load.js remainingMs()); its concurrency
// ({ k6 scenario: VUs, or what an open step keeps in flight }) sizes the budgets.
// hints.open: false for a scenario an open workload does not apply to (its lanes
// stay open for their whole step: push's subscriptions); a mix is open already.
// The lane a k6 scenario of a plan runs: its name is the lane's and its step's
// (`${lane.name}_c4`, `_o90`, `_mix`, as schedule() names them; tags.step), so
// connect_json_c1 is connect_json's whatever connect_json_fresh's are named.
export const laneOfStep = (lanes, name, sc) => lanes.find((l) => name === `${l.name}_${sc.tags.step}`);

export function schedule(lanes, hints, name, env) {
  const level = LEVELS[name];
  const workload = workloadOf(env);
  const open =
    workload === 'open' && hints.open !== false && !hints.mix && level.kind !== 'mix' ? openSpec(name, env) : null;
  let built;
  if (level.kind === 'mix') built = mixPlan(lanes, level, name, env, `LOAD=${name}`);
  else if (hints.mix) built = mixPlan(lanes, byLevel(name, MIX_AT), name, env, `the spec's mix at LOAD=${name}`);
  else built = steppedPlan(lanes, level, hints, env, open, name);
  return {
    level: name,
    workload: open ? 'open' : level.kind === 'mix' || hints.mix ? 'open (mix)' : 'closed',
    ...built,
  };
}

// The open steps of a level; OPEN_SHARES=10,50,90,150 (percent) and OPEN_CONNECTIONS=50 override.
function openSpec(name, env) {
  const base = byLevel(name, OPEN);
  return {
    connections: setting(env, 'OPEN_CONNECTIONS', base.connections),
    shares: setting(env, 'OPEN_SHARES', base.shares),
  };
}
