// Generation time per resource (study 001), as the x-generate header asks for it
// (common/generation.js): how page(...).books and book(id) spend `delay` ms on
// each resource that is not a server cache hit, one after another (serial), all at
// once (parallel) or batched through a DataLoader (dataloader). With no header (or
// delay=0) books are built at once, as before. The sleeps are timers: they cost no
// CPU, so the server keeps serving other requests meanwhile, as the study's Go
// handler did with time.Sleep.
import { setTimeout as sleep } from 'node:timers/promises';
import DataLoader from 'dataloader';
import { LIMITS } from '../../common/defaults.js';

// `count` resources, index 0 .. count-1, built by make(i); the first `hits` are cache
// hits. -> an array (no delay), a promise of one (serial), or an array of promises
// and values (parallel, dataloader), which graphql-js completes together.
// A serial generation over LIMITS.MAX_GENERATE_MS is refused with badInput(sentence).
export function generate(count, make, { delay, hits, resolve }, badInput) {
  const misses = Math.max(0, count - hits);
  if (!delay || !misses) return Array.from({ length: count }, (_, i) => make(i));
  if (resolve === 'serial') {
    if (misses * delay > LIMITS.MAX_GENERATE_MS) {
      throw badInput(
        `generating ${misses} resources of ${delay} ms one after another takes ${misses * delay} ms; the limit is ${LIMITS.MAX_GENERATE_MS} ms (LIMITS.MAX_GENERATE_MS): ask for fewer resources, more hits or a shorter delay`,
      );
    }
    return (async () => {
      const out = [];
      for (let i = 0; i < count; i++) {
        if (i >= hits) await sleep(delay);
        out.push(make(i));
      }
      return out;
    })();
  }
  if (resolve === 'dataloader') {
    // One loader for this list: the keys it is asked for in this tick are one batch,
    // generated in one go (one delay, as one query fetching every row would take).
    const loader = new DataLoader(async (keys) => {
      await sleep(delay);
      return keys.map(make);
    });
    return Array.from({ length: count }, (_, i) => (i < hits ? make(i) : loader.load(i)));
  }
  return Array.from({ length: count }, (_, i) => (i < hits ? make(i) : sleep(delay).then(() => make(i))));
}

// One resource (book(id)): a hit (hits >= 1) or no delay answers at once.
export function generateOne(make, { delay, hits }) {
  return delay && hits < 1 ? sleep(delay).then(make) : make();
}
