// Setting a server's clock against k6's: one method for every scenario that
// compares a time the server stamped with the time k6 received something.
//
// probe() asks the server for its clock once: -> { t0, t1, serverMs } (k6's
// Date.now() before and after, the server's reading in between). Of `samples`
// probes, the one with the shortest round trip is taken midway: through the
// profile's link both directions are delayed alike (R/2 each) on a warm
// connection, so the midpoint stays right, and its error is at most half of
// that round trip's excess over the link's; the first probe pays the connection's
// set-up and is never the shortest. -> { offsetMs (k6 clock - server clock), rttMs }.
export function calibrate(probe, samples = 5) {
  let best = null;
  for (let i = 0; i < samples; i++) {
    const { t0, t1, serverMs } = probe();
    if (!best || t1 - t0 < best.rttMs) best = { rttMs: t1 - t0, offsetMs: (t0 + t1) / 2 - serverMs };
  }
  return best;
}
