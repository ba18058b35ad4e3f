// What one subscriber made of a topic's numbered events (seq 1, 2, ... with no
// gaps on its server: servers/shared/hub.js), and when a VU's subscribers got
// each event. No k6 imports: Node tests use it as it is.
//
//   const t = new Tally();
//   t.take(seq)  -> 'new' (in order, or after a gap), 'late' (a gap filled: it came
//                   out of order), or 'duplicate' (received before)
//   t.begin(seq)  before any event: the subscription began after event `seq`, so
//                 events 1..seq were never this subscriber's (not missed)
//   t.finish(expected) once, at the end: events 1..expected it never got count as
//   missed (those before begin()'s seq aside), and so does every event that came
//   out of order.
export class Tally {
  constructor() {
    this.lastSeq = 0;
    this.received = 0;
    this.gaps = new Set(); // seqs skipped over, not (yet) received
    this.late = 0; // received out of order (a gap filled)
    this.duplicates = 0;
    this.missed = 0;
  }

  begin(seq) {
    if (this.received || this.lastSeq || !(seq > 0)) return;
    this.lastSeq = seq; // events 1..seq are neither gaps nor a tail
  }

  take(seq) {
    if (seq > this.lastSeq) {
      for (let s = this.lastSeq + 1; s < seq && this.gaps.size < 100000; s++) this.gaps.add(s);
      this.lastSeq = seq;
      this.received += 1;
      return 'new';
    }
    if (this.gaps.delete(seq)) {
      this.late += 1;
      this.received += 1;
      return 'late';
    }
    this.duplicates += 1;
    return 'duplicate';
  }

  // -> { missed, duplicates }: missed counts the events up to `expected` never
  // received and those received out of order.
  finish(expected) {
    const tail = Math.max(0, expected - this.lastSeq);
    this.missed = this.gaps.size + this.late + tail;
    return { missed: this.missed, duplicates: this.duplicates };
  }
}

// First and last receipt of each event over a set of subscribers: the spread of
// one event is its last receipt minus its first.
export class Spread {
  constructor() {
    this.first = new Map();
    this.last = new Map();
  }

  add(seq, at) {
    const f = this.first.get(seq);
    if (f === undefined || at < f) this.first.set(seq, at);
    const l = this.last.get(seq);
    if (l === undefined || at > l) this.last.set(seq, at);
  }

  // [ms] per event, in seq order.
  spreads() {
    return [...this.first.keys()].sort((a, b) => a - b).map((seq) => this.last.get(seq) - this.first.get(seq));
  }
}
