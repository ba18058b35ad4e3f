// What a lane meets at the link's events (the unstable scenario): the profile's events
// (data.network.events, timed from data.network.epochMs, which setup() set when it
// applied the profile: network.js), placed in time by common/recovery.js, the same
// schedule the link toxic keeps (tools/toxiproxy/events.go).
//
//   event_recovery  from the link's return (a blackout's end, a dip's end) to the end
//                   of the first operation of this VU that succeeds after it
//   event_recovered how many returns a success followed (0 added at each step's first
//                   operation, so a step with none has a sample: count>0 can gate it)
//   event_slow      of the operations that overlap an event, the share that took longer
//                   than the lane's budget plus the event's length
import { eventRecovered, eventRecovery, eventSlow } from './metrics.js';
import { eventWindows } from '../../common/recovery.js';

// Per VU: the last return credited with a recovery (every return once), and the step
// (its start) of its last operation.
let credited = 0;
let step = null;

// After each operation: ok, its start and end (epoch ms), the lane's budget (ms), and
// when its step began (sinceMs: a return before it belongs to another lane's step).
export function trackEvents(network, { ok, startMs, endMs, budgetMs, sinceMs = 0, tags }) {
  if (!network || !network.events || !network.epochMs) return;
  const { events, epochMs } = network;
  if (step !== sinceMs) {
    step = sinceMs;
    eventRecovered.add(0, tags);
  }
  // Back to the last return credited, at most a minute (a long run meets many events).
  const windows = eventWindows(events, epochMs, Math.max(credited, sinceMs, endMs - 60000), endMs);
  for (const [from, to] of windows) {
    if (from < endMs && to > startMs) eventSlow.add(endMs - startMs > budgetMs + events.lengthMs, tags);
  }
  if (!ok) return;
  // The latest return at or before this operation's end not yet credited.
  const back = windows.map(([, to]) => to).filter((to) => to <= endMs && to > credited && to > sinceMs);
  if (back.length) {
    const to = Math.max(...back);
    eventRecovery.add(endMs - to, tags);
    eventRecovered.add(1, tags);
    credited = to;
  }
}
