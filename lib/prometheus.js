// `--out prometheus=URL` (run, gate): k6's stock experimental-prometheus-rw output,
// every run's metrics written to a Prometheus remote-write endpoint as k6 runs. Trends
// go as native histograms (K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM), so percentiles
// can be taken over any window in PromQL. Every sample's tags become labels: k6's
// `scenario` (the pack's lane and step, e.g. ws_c1), `step`, `transport`, `tls`, and two
// the pack adds to every metric: `profile` and `k6pack_scenario` (ws-vs-http, …).
// Grafana: deploy/grafana/k6pack.json. docs/history.md, "Live metrics".
import { rawSetting } from '../common/settings.js';
import { UsageError } from './cli-support.js';

export const PROMETHEUS_OUTPUT = 'experimental-prometheus-rw';
// How often k6 pushes (its default, 5 s, unless K6_PROMETHEUS_RW_PUSH_INTERVAL says).
// A rate needs two pushes in its window: a lane's step shorter than two intervals shows
// in the quantile panels only at a shorter interval.
export const PUSH_INTERVAL = '5s';

// The --out value -> the remote-write URL; anything else is a UsageError naming the form.
export function parsePrometheusOut(value) {
  if (value === undefined) return null;
  const m = /^prometheus=(.+)$/.exec(String(value));
  let url;
  try {
    url = m && new URL(m[1]);
  } catch {
    url = null;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol))
    throw new UsageError(
      `--out ${value}: give prometheus=URL, the remote-write endpoint (e.g. prometheus=http://127.0.0.1:9090/api/v1/write, Prometheus started with --web.enable-remote-write-receiver)`,
    );
  return url.href;
}

// -> { args, processEnv } for one k6 run of `scenario` under `profile`.
export function prometheusRun(url, scenario, profile) {
  if (!url) return { args: [], processEnv: {} };
  return {
    args: ['-o', PROMETHEUS_OUTPUT, '--tag', `k6pack_scenario=${scenario}`, '--tag', `profile=${profile || 'default'}`],
    processEnv: {
      K6_PROMETHEUS_RW_SERVER_URL: url,
      K6_PROMETHEUS_RW_TREND_AS_NATIVE_HISTOGRAM: 'true',
      K6_PROMETHEUS_RW_PUSH_INTERVAL: rawSetting(process.env, 'K6_PROMETHEUS_RW_PUSH_INTERVAL') || PUSH_INTERVAL,
    },
  };
}

// Before anything starts: something must answer HTTP at the URL (Prometheus answers a GET
// on its write endpoint with 405). Nothing there, or no answer in 5 s: one line.
export async function checkPrometheus(url) {
  if (!url) return;
  try {
    await fetch(url, { method: 'GET', signal: AbortSignal.timeout(5000) });
  } catch (err) {
    const why = err.cause?.code || err.cause?.message || err.message;
    throw new UsageError(
      `--out prometheus=${url}: nothing answers there (${why}): start Prometheus with --web.enable-remote-write-receiver, or leave --out out`,
    );
  }
}
