package main

// What TCP does to the bytes of one direction of one connection on an emulated
// link, as a pure model: no goroutines and no clock of its own. The link toxic
// (link.go) hands it the bytes as they arrive and lets each piece out at the
// time it computes; the tests drive it with made-up times (tcp_test.go).
//
// The sender (the client for upstream, the server for downstream):
//
//   - Handshake: nothing leaves before the connection is `handshake` old (the
//     client may send once the SYN-ACK is back, R; the server's first bytes
//     leave once the client's ACK has reached it, 1.5 R).
//   - Link: bytes go out one after another at `rate` (FIFO; shared by every
//     connection of the proxy when the link is shared), then travel `latency`
//     (+- `jitter`). A byte reaches the receiving application when it has
//     arrived and every byte before it has too: TCP delivers in order.
//   - Slow start (RFC 5681 3.1, initial window RFC 6928): the sender may have
//     `cwnd` bytes in flight, from `iw`. It sends in rounds: a round starts when
//     data is sent at least one RTT after the previous round started (its
//     acknowledgements are back) and may carry cwnd bytes; more waits for the
//     next round. When a round starts, the previous one's bytes count as
//     acknowledged and the window grows by them (in slow start) but to no more
//     than twice what that round carried (Linux tcp_is_cwnd_limited: only a
//     window that was used grows), so a full window doubles every round trip.
//     It never grows past the bandwidth-delay product plus one segment, where
//     it no longer limits. After an idle period longer than the retransmission
//     timeout the window restarts (RFC 5681 4.1: at min(iw, cwnd); Linux
//     tcp_cwnd_restart halves it once per RTO of idle time, down to that).
//     common/model.js windowWaitMs computes the same rounds for one message.
//   - Loss: each segment (up to `mss` bytes of one send) is lost or not as the
//     loss model draws (Bernoulli, or Gilbert-Elliott as netem's gemodel); a
//     retransmission, sent a round trip or a timeout later, meets the model's
//     long-run rate (the burst its segment met has passed). A lost
//     segment is retransmitted when the third later segment's acknowledgement is
//     back (fast retransmit, RFC 5681 3.2: 3 duplicate ACKs; with SACK every loss
//     is repaired this way, RFC 6675) or, if that comes later than the
//     retransmission timeout, when the timeout expires (RFC 6298); a
//     retransmission lost again waits a timeout that doubles each time (RFC
//     6298 5.5). The timeout is Linux's (tcp_rtt_estimator, __tcp_set_rto:
//     srtt + rttvar, rttvar kept at least tcp_rto_min = 200 ms): the
//     connection's first sample (its handshake) gives rttvar = max(2 RTT,
//     200 ms), so its first round of data has RTO = RTT + max(2 RTT, 200 ms)
//     (3 RTT from 100 ms up); rttvar then closes a quarter of its distance to
//     200 ms per round trip, and a steady connection's RTO is RTT + 200 ms.
//     The lost bytes arrive one retransmission
//     later and every later byte of the direction waits for them (head-of-line
//     blocking). Nothing is dropped, duplicated or reordered. The retransmission
//     takes its own time on the link. The window is halved when a loss is
//     detected by duplicate ACKs and falls to one segment after a timeout
//     (RFC 5681 3.1/3.2), once per window of data (the bytes sent before the
//     reduction); it grows again by slow start up to ssthresh, then by one
//     segment per round trip (congestion avoidance).
//
// Limits: the acknowledgements travel no link of their own (they are back one
// RTT after a segment left, whatever the other direction carries); the SYN is
// never lost; no tail loss probe (Linux would probe a tail loss after 2 RTT
// instead of waiting for the RTO when 2 RTT < RTO); no delayed ACKs.

import (
	"math"
	"math/rand"
	"sync"
	"time"
)

// linkConfig is one direction of a link, from the link toxic's attributes.
type linkConfig struct {
	latency   time.Duration // one way
	jitter    time.Duration // each piece waits latency +- jitter (uniform)
	rtt       time.Duration // acknowledgements are back one RTT after a segment left
	handshake time.Duration // nothing leaves before the connection is this old
	rate      float64       // bytes per second; 0: no limit
	iw        int           // initial window in bytes; 0: no window (no slow start, no reductions)
	mss       int           // bytes per segment
	rtoMin    time.Duration // the RTO is rtt + rtoMin
	loss      lossModel
	events    *linkEvents // blackouts, moves and dips (events.go); nil: none
	trace     *linkTrace  // delivery opportunities instead of rate (events.go); nil: none
}

const (
	maxRetransmissions = 6                    // a segment lost this often is let through on its next try
	pieceSpan          = time.Millisecond     // consecutive segments are let out together up to this far apart
	unlimitedWindow    = math.MaxInt64 / 4    // cwnd when nothing limits it
	defaultMSS         = 1460                 // RFC 6928's segment size for a 14600-byte initial window
	maxBackoffShift    = 6                    // the timeout doubles at most this often (64 RTO)
	noSsthresh         = int64(math.MaxInt64) // before any loss, slow start never ends by itself
)

// rto: the retransmission timeout after `samples` rounds of acknowledgements
// beyond the handshake's.
func (c *linkConfig) rto(samples int) time.Duration {
	first := 2 * c.rtt
	if first < c.rtoMin {
		first = c.rtoMin
	}
	extra := float64(first - c.rtoMin)
	for i := 0; i < samples && extra >= float64(time.Microsecond); i++ {
		extra *= 0.75
	}
	if extra < float64(time.Microsecond) {
		extra = 0
	}
	return c.rtt + c.rtoMin + time.Duration(extra)
}

// serialize is how long n bytes take on the link.
func (c *linkConfig) serialize(n int) time.Duration { return c.serializeAt(time.Time{}, n) }

// serializeAt is how long n bytes take on the link when they leave at t (a dip
// lowers the rate while it lasts).
func (c *linkConfig) serializeAt(t time.Time, n int) time.Duration {
	rate := c.events.rateAt(t, c.rate)
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(n) / rate * float64(time.Second))
}

// meanRate: the link's rate in bytes per second, a trace's mean (a packet of
// up to 1500 bytes per opportunity) when it has one.
func (c *linkConfig) meanRate() float64 {
	if c.trace != nil {
		return float64(len(c.trace.ms)) * 1500 / c.trace.period.Seconds()
	}
	return c.rate
}

// opensAt: when a connection opened at `opened` may send (its handshake done);
// a handshake that meets a blackout waits for the SYN's retransmission (events.go).
func (c *linkConfig) opensAt(opened time.Time) time.Time {
	if c.events.dark() {
		opened = c.events.openAt(opened, c.rtt)
	}
	return opened.Add(c.handshake)
}

// windowCap is where the window stops growing: one bandwidth-delay product and a
// segment keep the link busy (no cap without a rate).
func (c *linkConfig) windowCap() int64 {
	rate := c.meanRate()
	if rate <= 0 {
		return unlimitedWindow
	}
	bdp := int64(rate*c.rtt.Seconds()) + int64(c.mss)
	if bdp < int64(c.iw) {
		return int64(c.iw)
	}
	return bdp
}

// lossModel: Gilbert-Elliott as netem's gemodel (net/sched/sch_netem.c
// loss_gilb_ell): per segment, first the state may change (good -> bad with
// probability p, bad -> good with r), then the segment is lost with the
// probability of the state it was in (good: lossGood = 1-k, bad: lossBad = 1-h).
// p == 0 is plain Bernoulli loss at lossGood.
type lossModel struct {
	lossGood, lossBad float64
	p, r              float64
}

func (m lossModel) active() bool { return m.lossGood > 0 || (m.p > 0 && m.lossBad > 0) }

// rate: the share of segments lost in the long run (the states' stationary mix).
func (m lossModel) rate() float64 {
	if m.p <= 0 {
		return m.lossGood
	}
	bad := m.p / (m.p + m.r)
	return (1-bad)*m.lossGood + bad*m.lossBad
}

type lossState struct{ bad bool }

func (m lossModel) lost(st *lossState, rng *rand.Rand) bool {
	if !m.active() {
		return false
	}
	if st.bad {
		if rng.Float64() < m.r {
			st.bad = false
		}
		return rng.Float64() < m.lossBad
	}
	if m.p > 0 && rng.Float64() < m.p {
		st.bad = true
	}
	return rng.Float64() < m.lossGood
}

// sharedLink is the FIFO of one link direction: a private one per connection,
// or one the link toxic shares between every connection of its proxy.
type sharedLink struct {
	mu     sync.Mutex
	free   time.Time
	cursor traceCursor // a trace's next unused opportunity
}

// slot: when a segment of n bytes handed to the link at `at` has left it, and
// its time on the link: by the trace's opportunities when there is one, else by
// the rate.
func (l *sharedLink) slot(at time.Time, n int, c *linkConfig) (time.Time, time.Duration) {
	if c.trace != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.cursor.take(c.trace, at), 0
	}
	ser := c.serializeAt(at, n)
	return l.reserve(at, ser).Add(ser), ser
}

// reserve takes d of the link's time from at or when the link is free, whichever
// is later, and returns when that slot starts.
func (l *sharedLink) reserve(at time.Time, d time.Duration) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := at
	if l.free.After(start) {
		start = l.free
	}
	l.free = start.Add(d)
	return start
}

// piece is a run of bytes that reaches the receiving application at `deliver`
// (or later: never before the piece ahead of it).
type piece struct {
	data    []byte
	deliver time.Time
	first   time.Time     // when its first segment arrives (grouping)
	jitter  time.Duration // drawn once per piece
	loss    *lostSegment  // the segment was lost: deliver is its recovery
}

// lostSegment: a lost segment waiting to learn how it is recovered.
type lostSegment struct {
	piece    *piece
	seq      int64         // stream offset of its first byte
	sentEnd  time.Time     // when it left
	rto      time.Duration // the connection's retransmission timeout then
	ser      time.Duration // its time on the link
	retries  int           // its retransmission is lost this many more times
	later    int           // segments sent after it that arrived (duplicate ACKs)
	resolved bool
}

type queued struct {
	data    []byte
	arrived time.Time
}

// tcpSender is the state of one direction of one connection.
type tcpSender struct {
	opened time.Time
	rng    *rand.Rand
	lossSt lossState

	started     bool
	samples     int // rounds acknowledged (for the RTO)
	cwnd        int64
	ssthresh    int64
	roundStart  time.Time
	roundSent   int64
	lastSendEnd time.Time
	seq         int64 // bytes sent so far

	cutPending  bool
	cutAt       time.Time
	cutTimeout  bool  // the pending reduction follows a timeout
	recoverySeq int64 // losses of bytes before this offset do not reduce the window again

	queue       []queued
	out         []*piece
	unresolved  []*lostSegment
	lastRelease time.Time
	private     sharedLink

	darkEnd  time.Time // the blackout the bytes lost in it wait out (events.go)
	darkBack time.Time // when they arrive: its first retransmission after it

	drop func() bool // tests: scripted losses instead of the loss model
}

func newTCPSender(opened time.Time, seed int64) *tcpSender {
	return &tcpSender{opened: opened, rng: rand.New(rand.NewSource(seed)), ssthresh: noSsthresh}
}

// push queues bytes that arrived at the sender.
func (s *tcpSender) push(data []byte, arrived time.Time) {
	if len(data) > 0 {
		s.queue = append(s.queue, queued{data, arrived})
	}
}

// pending: bytes not yet sent or not yet let out.
func (s *tcpSender) pending() bool { return len(s.queue) > 0 || len(s.out) > 0 }

// advance sends everything that may leave by `now` and returns when the next
// bytes may leave (zero when nothing is queued). link is the FIFO the bytes
// share (nil: this connection's own).
func (s *tcpSender) advance(now time.Time, c *linkConfig, link *sharedLink) time.Time {
	if link == nil {
		link = &s.private
	}
	for len(s.queue) > 0 {
		head := &s.queue[0]
		t := head.arrived
		if open := c.opensAt(s.opened); open.After(t) {
			t = open
		}
		n := int64(len(head.data))
		if c.iw > 0 {
			if s.started && t.Before(s.roundStart.Add(c.rtt)) && s.roundSent >= s.cwnd {
				t = s.roundStart.Add(c.rtt) // the window is full: wait for its acknowledgements
			}
			if t.After(now) {
				return t
			}
			s.resolveTimeouts(t, c) // a loss whose timeout has expired reduces the window from this round on
			if !s.started || !t.Before(s.roundStart.Add(c.rtt)) {
				s.newRound(t, c)
			}
			if room := s.cwnd - s.roundSent; n > room {
				n = room
			}
		} else if t.After(now) {
			return t
		}
		s.send(t, head.data[:n], c, link)
		if head.data = head.data[n:]; len(head.data) == 0 {
			s.queue[0] = queued{}
			s.queue = s.queue[1:]
		}
	}
	return time.Time{}
}

// newRound starts a round at t: the previous round's bytes are acknowledged.
func (s *tcpSender) newRound(t time.Time, c *linkConfig) {
	if !s.started {
		s.started = true
		s.cwnd = int64(c.iw)
	} else {
		s.samples++
		sent := s.roundSent
		if s.cwnd < s.ssthresh { // slow start
			grown := s.cwnd + sent
			if grown > 2*sent {
				grown = 2 * sent
			}
			if grown > s.ssthresh {
				grown = s.ssthresh
			}
			if grown > s.cwnd {
				s.cwnd = grown
			}
		} else if sent >= s.cwnd-int64(c.mss) { // congestion avoidance, window used
			s.cwnd += int64(c.mss)
		}
		if limit := c.windowCap(); s.cwnd > limit {
			s.cwnd = limit
		}
		s.applyCut(t, c)
		rto := c.rto(s.samples)
		if idle := t.Sub(s.lastSendEnd); idle > rto && idle > c.rtt {
			restart := int64(c.iw)
			if s.cwnd < restart {
				restart = s.cwnd
			}
			if three := s.cwnd - s.cwnd/4; s.ssthresh != noSsthresh && three > s.ssthresh {
				s.ssthresh = three
			}
			for d := idle - rto; d > 0 && s.cwnd > restart; d -= rto {
				s.cwnd /= 2
			}
			if s.cwnd < restart {
				s.cwnd = restart
			}
		}
	}
	s.applyCut(t, c)
	s.roundStart = t
	s.roundSent = 0
}

// applyCut reduces the window for a loss detected by t: halved after duplicate
// ACKs, one segment after a timeout; ssthresh half the window (at least two segments).
func (s *tcpSender) applyCut(t time.Time, c *linkConfig) {
	if !s.cutPending || t.Before(s.cutAt) {
		return
	}
	half := s.cwnd / 2
	if min := int64(2 * c.mss); half < min {
		half = min
	}
	s.ssthresh = half
	if s.cutTimeout {
		s.cwnd = int64(c.mss)
	} else {
		s.cwnd = half
	}
	s.cutPending = false
	s.recoverySeq = s.seq
}

// send puts the bytes on the link at t, segment by segment.
func (s *tcpSender) send(t time.Time, data []byte, c *linkConfig, link *sharedLink) {
	mss := c.mss
	if mss <= 0 {
		mss = defaultMSS
	}
	s.resolveTimeouts(t, c)
	for len(data) > 0 {
		n := len(data)
		if n > mss {
			n = mss
		}
		seg := data[:n]
		data = data[n:]
		end, ser := link.slot(t, n, c)
		seq := s.seq
		s.seq += int64(n)
		s.roundSent += int64(n)
		s.lastSendEnd = end
		if blackout, dark := c.events.during(end.Add(c.latency)); dark && c.events.dark() {
			s.out = append(s.out, s.darkPiece(seg, end, ser, blackout, c))
			continue
		}
		if s.lost(c) {
			link.slot(end, n, c) // the retransmission's time on the link
			retries := 0
			for retries < maxRetransmissions && s.lostAgain(c) {
				retries++
			}
			ls := &lostSegment{seq: seq, sentEnd: end, ser: ser, retries: retries, rto: c.rto(s.samples)}
			// Until three later segments arrive, the timeout is what recovers it.
			p := &piece{data: seg, loss: ls, deliver: recoveryTime(ls, end.Add(ls.rto), true, c)}
			ls.piece = p
			s.out = append(s.out, p)
			s.unresolved = append(s.unresolved, ls)
			continue
		}
		arrive := end.Add(c.latency)
		s.dupAck(end, c)
		if last := s.lastPiece(seg); last != nil && arrive.Sub(last.first) <= pieceSpan {
			last.data = last.data[:len(last.data)+n]
			last.deliver = arrive.Add(last.jitter)
			continue
		}
		jit := s.jitter(c)
		s.out = append(s.out, &piece{data: seg, deliver: arrive.Add(jit), first: arrive, jitter: jit})
	}
}

// darkPiece: a segment that would arrive in a blackout (ending at `blackout`)
// is lost, and so is every retransmission that would; the first that would
// not, after timeouts doubling from the connection's RTO, brings it. Later
// segments lost in the same blackout arrive with it (they follow its
// acknowledgement), and the window falls to one segment from then on.
func (s *tcpSender) darkPiece(seg []byte, end time.Time, ser time.Duration, blackout time.Time, c *linkConfig) *piece {
	if !blackout.Equal(s.darkEnd) {
		rto := c.rto(s.samples)
		at := end
		for i := 0; i < 16; i++ {
			at = at.Add(rto)
			if i < maxBackoffShift {
				rto *= 2
			}
			if !c.events.darkAt(at.Add(ser).Add(c.latency)) {
				break
			}
		}
		s.darkEnd, s.darkBack = blackout, at.Add(ser).Add(c.latency)
		s.scheduleCut(at, true)
		if at.After(s.lastSendEnd) {
			s.lastSendEnd = at // a retransmission is a send: the connection was not idle
		}
	}
	// A resolved loss: never merged with the pieces after it.
	return &piece{data: seg, deliver: s.darkBack, first: s.darkBack, loss: &lostSegment{resolved: true}}
}

// lastPiece: the last piece not yet let out, if it was not lost and its bytes
// end right where seg's begin in the same array (so it can grow over them).
func (s *tcpSender) lastPiece(seg []byte) *piece {
	if len(s.out) == 0 {
		return nil
	}
	p := s.out[len(s.out)-1]
	if p.loss != nil || len(seg) == 0 || cap(p.data) <= len(p.data) || &p.data[:len(p.data)+1][len(p.data)] != &seg[0] {
		return nil
	}
	return p
}

func (s *tcpSender) lost(c *linkConfig) bool {
	if s.drop != nil {
		return s.drop()
	}
	return c.loss.lost(&s.lossSt, s.rng)
}

// lostAgain: whether a retransmission is lost too. It leaves a round trip or a
// timeout after the segment it repeats, when the burst that segment met has
// passed: it meets the loss model's long-run rate.
func (s *tcpSender) lostAgain(c *linkConfig) bool {
	if s.drop != nil {
		return s.drop()
	}
	return s.rng.Float64() < c.loss.rate()
}

func (s *tcpSender) jitter(c *linkConfig) time.Duration {
	if c.jitter <= 0 {
		return 0
	}
	return time.Duration(s.rng.Int63n(int64(2*c.jitter))) - c.jitter
}

// dupAck: a segment that left at `end` arrives, and its ACK is one more
// duplicate for every lost segment before it; the third one triggers a fast
// retransmission unless the timeout comes first.
func (s *tcpSender) dupAck(end time.Time, c *linkConfig) {
	for _, ls := range s.unresolved {
		if ls.resolved {
			continue
		}
		if ls.later++; ls.later == 3 {
			if at := end.Add(c.rtt); at.Before(ls.sentEnd.Add(ls.rto)) {
				s.resolve(ls, at, false, c)
			} else {
				s.resolve(ls, ls.sentEnd.Add(ls.rto), true, c)
			}
		}
	}
	s.prune()
}

// resolveTimeouts: a lost segment whose timeout has expired by t is recovered by it.
func (s *tcpSender) resolveTimeouts(t time.Time, c *linkConfig) {
	for _, ls := range s.unresolved {
		if !ls.resolved && !t.Before(ls.sentEnd.Add(ls.rto)) {
			s.resolve(ls, ls.sentEnd.Add(ls.rto), true, c)
		}
	}
	s.prune()
}

func (s *tcpSender) prune() {
	kept := s.unresolved[:0]
	for _, ls := range s.unresolved {
		if !ls.resolved {
			kept = append(kept, ls)
		}
	}
	for i := len(kept); i < len(s.unresolved); i++ {
		s.unresolved[i] = nil
	}
	s.unresolved = kept
}

// resolve: the loss is detected at `at` (by a timeout or three duplicate ACKs):
// its bytes arrive one retransmission later, and the window is reduced unless
// the loss belongs to a window already reduced for.
func (s *tcpSender) resolve(ls *lostSegment, at time.Time, timeout bool, c *linkConfig) {
	ls.piece.deliver = recoveryTime(ls, at, timeout, c)
	ls.resolved = true
	if sent := ls.piece.deliver.Add(-c.latency); sent.After(s.lastSendEnd) {
		s.lastSendEnd = sent // a retransmission is a send: the connection was not idle
	}
	if ls.seq >= s.recoverySeq {
		s.scheduleCut(at, timeout || ls.retries > 0)
	}
}

// recoveryTime: when a lost segment's bytes arrive if its first retransmission
// leaves at `at` (after a timeout, or a fast retransmission). Each lost
// retransmission waits a timeout, doubled each time.
func recoveryTime(ls *lostSegment, at time.Time, timeout bool, c *linkConfig) time.Time {
	rto := ls.rto
	if timeout {
		rto *= 2 // the timer that fired backs off
	}
	for i := 0; i < ls.retries; i++ {
		at = at.Add(rto)
		if i < maxBackoffShift {
			rto *= 2
		}
	}
	return at.Add(ls.ser).Add(c.latency)
}

func (s *tcpSender) scheduleCut(at time.Time, timeout bool) {
	if !s.cutPending || at.Before(s.cutAt) {
		if !s.cutPending {
			s.cutTimeout = false
		}
		s.cutAt = at
	}
	s.cutPending = true
	s.cutTimeout = s.cutTimeout || timeout
}

// next: when the piece at the head may be let out (zero if none).
func (s *tcpSender) next() time.Time {
	if len(s.out) == 0 {
		return time.Time{}
	}
	at := s.out[0].deliver
	if s.lastRelease.After(at) {
		at = s.lastRelease
	}
	return at
}

// due pops the pieces that may be let out at now, in order.
func (s *tcpSender) due(now time.Time) []*piece {
	var out []*piece
	for len(s.out) > 0 {
		at := s.next()
		if at.After(now) {
			break
		}
		p := s.out[0]
		s.out[0] = nil
		s.out = s.out[1:]
		s.lastRelease = at
		p.deliver = at
		out = append(out, p)
	}
	return out
}

// drain pops everything, sent or not, in order (the toxic is being removed).
func (s *tcpSender) drain() [][]byte {
	var out [][]byte
	for _, p := range s.out {
		out = append(out, p.data)
	}
	for _, q := range s.queue {
		out = append(out, q.data)
	}
	s.out, s.queue, s.unresolved = nil, nil, nil
	return out
}
