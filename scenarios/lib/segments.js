// The network profile when one test runs as several k6 instances at once
// (--execution-segment, as the k6-operator's runners do), all through one Toxiproxy.
//
//   setup():    the instance whose segment starts at 0 (or the only instance)
//               takes the stack's hold (hold.js: the segments of one run are one
//               holder) and applies the profile; the others wait until every proxy
//               carries the profile's toxics, then start.
//   teardown(): an instance whose segment does not start at 0 only says it is
//               done; the one starting at 0 waits until the done segments and its
//               own cover 0..1 (at most DONE_WAIT_MS), then puts back the toxics it
//               found and gives the hold back. So no instance's teardown changes the
//               network under another's load.
//
// "Done" is a marker proxy on Toxiproxy, k6pack_done_<from>_<to>, created
// disabled: it never listens and carries no traffic. The first segment removes
// the markers before its setup and after its teardown.
import exec from 'k6/execution';
import http from 'k6/http';
import { sleep } from 'k6';
import { epochOf, withEpoch } from '../../common/profiles.js';
import { carries } from '../../common/toxics.js';
import { releaseHold, takeHold } from './hold.js';
import { applyNetwork, PROXY_NAMES, restoreNetwork, toxiproxyUrl } from './network.js';
import { coversWhole, segmentRange } from '../../common/results.js';

const MARKER = 'k6pack_done_';
const READY_WAIT_MS = 45000; // below setupTimeout (60 s)
const DONE_WAIT_MS = 25000; // below teardownTimeout (30 s)
const POLL_MS = 200;
const params = {
  timeout: '5s',
  tags: { name: 'toxiproxy', k6pack: 'control' },
  headers: { 'Content-Type': 'application/json' },
};

// This instance's segment from k6's options (setup/teardown only):
// { text: '1/2:1', from: 0.5, to: 1, sequence: '0,1/2,1' | null } or null when the test is not split.
export function currentSegment() {
  const o = exec.test.options;
  const text = o.executionSegment;
  if (!text || text === '0:1') return null;
  const [from, to] = segmentRange(text);
  return { text: String(text), from, to, sequence: o.executionSegmentSequence || null };
}

const markerName = (seg) =>
  `${MARKER}${String(seg.text)
    .replace(/\//g, '-')
    .replace(':', '_')
    .replace(/[^A-Za-z0-9_.-]/g, '')}`;

// k6pack_done_1-2_1 -> [0.5, 1]
const markerRange = (name) => segmentRange(name.slice(MARKER.length).replace(/-/g, '/').replace('_', ':'));

function proxyNames(url) {
  const res = http.get(`${url}/proxies`, params);
  return res.status === 200 ? res.json() : {};
}

function deleteMarkers(url) {
  for (const name of Object.keys(proxyNames(url)).filter((n) => n.startsWith(MARKER))) {
    http.del(`${url}/proxies/${name}`, null, params);
  }
}

// For setup(): takes the hold (instance 0 only), then applies the profile.
// holdInfo: { what, profile, script, seconds } (hold.js). Returns { network (what
// applyNetwork returns, and the segment), hold }.
// names: the proxies the scenario shapes (default: the reference servers').
export function prepareNetwork(profile, holdInfo, fatal, names = PROXY_NAMES) {
  const seg = currentSegment();
  const url = toxiproxyUrl();
  if (!seg || seg.from === 0) {
    if (seg) deleteMarkers(url);
    const hold = takeHold(url, holdInfo, fatal);
    return { network: { ...applyNetwork(profile, url, names), segment: seg && seg.text }, hold };
  }
  const deadline = Date.now() + READY_WAIT_MS;
  // A timed profile (events, a trace) carries the epoch the first segment set: compare with it.
  let epochMs = 0;
  const ready = () => {
    const proxies = proxyNames(url);
    epochMs = epochOf(names.flatMap((p) => (proxies[p] && proxies[p].toxics) || []));
    return carries(proxies, names, withEpoch(profile.toxics, epochMs));
  };
  while (!ready()) {
    if (Date.now() > deadline) {
      throw `segment ${seg.text}: the proxies at ${url} did not get profile ${profile.name}'s toxics within ${READY_WAIT_MS / 1000} s: start the segment 0:... instance too, with the same PROFILE`;
    }
    sleep(POLL_MS / 1000);
  }
  return {
    network: {
      profile: profile.name,
      toxics: profile.toxics.map((t) => t.name),
      toxiproxy: url,
      epochMs,
      segment: seg.text,
      appliedBy: 'the segment starting at 0',
    },
    hold: null,
  };
}

// For teardown(data): data is what prepareNetwork returned.
export function releaseNetwork(prepared) {
  const seg = currentSegment();
  const url = toxiproxyUrl();
  const { network, hold } = prepared || {};
  if (seg && seg.from !== 0) {
    const body = JSON.stringify({
      name: markerName(seg),
      listen: '127.0.0.1:0',
      upstream: '127.0.0.1:9',
      enabled: false,
    });
    const res = http.post(`${url}/proxies`, body, params);
    if (res.status !== 201 && res.status !== 409)
      console.warn(
        `segment ${seg.text}: could not tell Toxiproxy it is done (${res.status}); the first segment restores the toxics after ${DONE_WAIT_MS / 1000} s`,
      );
    return;
  }
  if (seg) {
    const deadline = Date.now() + DONE_WAIT_MS;
    for (;;) {
      const done = Object.keys(proxyNames(url))
        .filter((n) => n.startsWith(MARKER))
        .map(markerRange);
      if (coversWhole([[seg.from, seg.to], ...done])) break;
      if (Date.now() > deadline) {
        console.warn(
          `segment ${seg.text}: the other segments did not finish within ${DONE_WAIT_MS / 1000} s; restoring the toxics anyway`,
        );
        break;
      }
      sleep(POLL_MS / 1000);
    }
    deleteMarkers(url);
  }
  restoreNetwork(network, url);
  releaseHold(url, hold);
}
