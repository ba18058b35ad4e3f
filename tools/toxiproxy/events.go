package main

// Time-varying links: the events and traces of the link toxic (issue 26). A
// phone's link is not steady: it goes dark for a second or two in a handover,
// changes address when it moves from Wi-Fi to cellular (every connection dies),
// and its bandwidth collapses and recovers. The link toxic applies these itself,
// on a schedule timed from `epoch` (the run's start, the same for every
// connection and lane), so no API call has to land on time:
//
//	event         0 none, 1 blackout, 2 move (silent death), 3 move (reset), 4 dip
//	event_offset  ms from epoch to the first event's start
//	event_period  ms from one event's start to the next (0: one event only)
//	event_length  ms an event lasts
//	dip_share     ppm of the bitrate during a dip
//	trace         a Mahimahi trace (below)
//
// What TCP does in a blackout (tcp.go's send): a segment that would arrive
// while the link is dark is lost, and so is every retransmission of it that
// would; the sender retransmits after its retransmission timeout, doubling it
// each time (RFC 6298 5.5; Linux: from RTT + tcp_rto_min 200 ms), so the bytes
// arrive at the first retransmission after the link is back, not when it comes
// back. Every later segment lost to the same blackout follows that one (TCP
// delivers in order; they are resent as its acknowledgement returns), and the
// window falls to one segment (a timeout). A direction with nothing to send
// meets no blackout at all: an idle connection survives it untouched. A
// connection opened in the dark (its SYN or SYN-ACK lost) retries its SYN after
// 1 s, doubling (RFC 6298 2.1 and 5.7; Linux TCP_TIMEOUT_INIT), and its
// handshake completes at the first try that meets a lit link.
//
// A move is a blackout after which every connection opened before its end is
// dead. Silent: nothing passes either way again (what was sent is dropped), and
// the connection is left open, so the client learns only from its own timeout
// or keepalive; announced: at the blackout's end the proxy closes the
// connection's sockets with a reset (SO_LINGER 0, patch 0003). Limits: the ACKs
// of a blackout's segments travel no link (as in tcp.go); a silent connection
// that its client closes is closed to the server too (toxiproxy has no way to
// keep one side open).
//
// A dip multiplies the bitrate by dip_share while it lasts (each segment leaves
// at the rate of the moment it is sent).
//
// A trace (Mahimahi's format, mm-link: each timestamp in ms is an opportunity to
// deliver one packet of up to 1500 bytes; the list repeats every last-timestamp
// ms) replaces the bitrate: each segment leaves at the next opportunity not yet
// used, in that direction's FIFO (the connection's own, or the proxy's when
// shared), and then travels `latency`.

import (
	"sort"
	"time"
)

type eventKind int64

const (
	eventNone eventKind = iota
	eventBlackout
	eventMoveSilent
	eventMoveReset
	eventDip
)

// synRTO: the SYN's first retransmission timeout (Linux TCP_TIMEOUT_INIT, RFC 6298 2.1).
const synRTO = time.Second

// linkEvents: the schedule of one link direction (zero: none).
type linkEvents struct {
	epoch  time.Time
	kind   eventKind
	offset time.Duration
	period time.Duration
	length time.Duration
	share  float64 // of the rate during a dip
}

func (e *linkEvents) active() bool {
	return e != nil && e.kind != eventNone && !e.epoch.IsZero() && e.length > 0
}

func (e *linkEvents) dark() bool {
	return e.active() && (e.kind == eventBlackout || e.kind == eventMoveSilent || e.kind == eventMoveReset)
}

func (e *linkEvents) isMove() bool {
	return e.active() && (e.kind == eventMoveSilent || e.kind == eventMoveReset)
}

// index: the number of the last event that started at or before t (-1: none yet).
func (e *linkEvents) index(t time.Time) int64 {
	first := e.epoch.Add(e.offset)
	if t.Before(first) {
		return -1
	}
	if e.period <= 0 {
		return 0
	}
	return int64(t.Sub(first) / e.period)
}

// window: the start and end of event i.
func (e *linkEvents) window(i int64) (time.Time, time.Time) {
	start := e.epoch.Add(e.offset).Add(time.Duration(i) * e.period)
	return start, start.Add(e.length)
}

// during: the end of the event t falls in, if it does.
func (e *linkEvents) during(t time.Time) (time.Time, bool) {
	if !e.active() {
		return time.Time{}, false
	}
	i := e.index(t)
	if i < 0 || (e.period <= 0 && i > 0) {
		return time.Time{}, false
	}
	start, end := e.window(i)
	if !t.Before(start) && t.Before(end) {
		return end, true
	}
	return time.Time{}, false
}

// darkAt: whether the link is dark at t (a blackout or a move's).
func (e *linkEvents) darkAt(t time.Time) bool {
	if !e.dark() {
		return false
	}
	_, in := e.during(t)
	return in
}

// darkBetween: whether any part of [a, b] is dark.
func (e *linkEvents) darkBetween(a, b time.Time) bool {
	if !e.dark() {
		return false
	}
	if e.darkAt(a) {
		return true
	}
	// An event that starts within (a, b].
	i := e.index(b)
	if i < 0 || (e.period <= 0 && i > 0) {
		return false
	}
	start, _ := e.window(i)
	return start.After(a)
}

// deathAt: when a connection opened at `opened` dies in a move (zero: never):
// the end of the first move event that ends after it opened.
func (e *linkEvents) deathAt(opened time.Time) time.Time {
	if !e.isMove() {
		return time.Time{}
	}
	if end, in := e.during(opened); in {
		return end
	}
	i := e.index(opened) + 1
	if e.period <= 0 && i > 0 {
		return time.Time{}
	}
	_, end := e.window(i)
	return end
}

// rateAt: the bitrate (bytes/s) at t, a dip's share of it while one lasts.
func (e *linkEvents) rateAt(t time.Time, rate float64) float64 {
	if rate <= 0 || !e.active() || e.kind != eventDip {
		return rate
	}
	if _, in := e.during(t); in {
		return rate * e.share
	}
	return rate
}

// openAt: when a connection opened at `opened` completes its handshake's round
// trip `rtt` (the first SYN try whose round trip meets no dark moment).
func (e *linkEvents) openAt(opened time.Time, rtt time.Duration) time.Time {
	t, wait := opened, synRTO
	for i := 0; i < 8 && e.darkBetween(t, t.Add(rtt)); i++ {
		t = t.Add(wait)
		wait *= 2
	}
	return t
}

// linkTrace: a Mahimahi trace timed from epoch.
type linkTrace struct {
	epoch  time.Time
	ms     []int64 // ascending; the last is the period (> 0)
	period time.Duration
}

func newLinkTrace(epoch time.Time, ms []int64) *linkTrace {
	if epoch.IsZero() || len(ms) == 0 || ms[len(ms)-1] <= 0 {
		return nil
	}
	for i := 1; i < len(ms); i++ {
		if ms[i] < ms[i-1] || ms[0] < 0 {
			return nil // the CLI and k6 reject such a file first (common/trace.js)
		}
	}
	return &linkTrace{epoch: epoch, ms: ms, period: time.Duration(ms[len(ms)-1]) * time.Millisecond}
}

// at: the time of opportunity k (k counts every opportunity from the epoch's
// cycle 0; negative before it).
func (tr *linkTrace) at(k int64) time.Time {
	n := int64(len(tr.ms))
	cycle := k / n
	if k%n < 0 {
		cycle--
	}
	i := k - cycle*n
	return tr.epoch.Add(time.Duration(cycle) * tr.period).Add(time.Duration(tr.ms[i]) * time.Millisecond)
}

// first: the number of the first opportunity at or after t.
func (tr *linkTrace) first(t time.Time) int64 {
	n := int64(len(tr.ms))
	d := t.Sub(tr.epoch)
	cycle := int64(d / tr.period)
	if d < 0 && d%tr.period != 0 {
		cycle--
	}
	into := d - time.Duration(cycle)*tr.period // [0, period)
	i := sort.Search(len(tr.ms), func(j int) bool {
		return time.Duration(tr.ms[j])*time.Millisecond >= into
	})
	return cycle*n + int64(i)
}

// traceCursor: the next unused opportunity of one FIFO.
type traceCursor struct {
	next int64
	set  bool
}

// take: the first opportunity at or after t that this FIFO has not used.
func (c *traceCursor) take(tr *linkTrace, t time.Time) time.Time {
	k := tr.first(t)
	if c.set && k < c.next {
		k = c.next
	}
	c.next, c.set = k+1, true
	return tr.at(k)
}
