package main

// The link toxic: one per direction, it makes a proxy's connections behave like
// TCP on a network profile's link, in one goroutine per connection and
// direction with one precise timer (clock.go):
//
//	handshake  nothing leaves before the connection is this old (ms): R upstream
//	           (the SYN-ACK), 1.5 R downstream (the client's ACK has reached the server)
//	latency    one-way delay (ms), jitter: +- that much per piece (ms)
//	rtt        the round trip (ms): when acknowledgements are back, for the window
//	           and the retransmission timeout
//	bitrate    the link's rate in bit/s (0: no limit); shared: 1 when every
//	           connection of the proxy shares it (FIFO), 0 when each has its own
//	iw         initial congestion window in bytes (0: no slow start and no window)
//	mss        bytes per segment (default 1460)
//	rto_min    the retransmission timeout is rtt + rto_min (ms, default 200: Linux)
//	loss       parts per million of segments lost (in the good state)
//	burst_p, burst_r, burst_loss  Gilbert-Elliott bursts (ppm): good -> bad, bad ->
//	           good, and the loss in the bad state (netem gemodel p, r, 1-h)
//	epoch, event, event_offset, event_period, event_length, dip_share, trace
//	           blackouts, moves, dips and a Mahimahi trace, timed from epoch
//	           (Unix ms): events.go
//	radio, radio_device, uplink
//	           the phone's radio states (RRC), shared by every connection of
//	           the device: radio.go; uplink 1 on the toxic that carries the
//	           phone's packets (upstream)
//	nat_idle   a carrier NAT's idle timeout (ms, 0: none): nat.go
//	radio_log  read-only, listed on the uplink toxic of a device with a radio:
//	           the radio's event log (radio_log.go)
//
// What TCP does with these is tcp.go's model. Replacing the handshake + latency
// + bandwidth chain of earlier versions, it also costs less: one channel hop and
// one timer per piece instead of three of each, and a timer that fires within
// ~0.1 ms instead of up to 1 ms late (clock.go).
//
// Every connection and direction has its state (linkState), which survives an
// update of the toxic's attributes (a profile switch 3g -> lte keeps the
// connection past its handshake, with its window); bytes held in it are let out
// at once when the toxic is removed (Cleanup) and at their times otherwise. A
// chunk is never dropped, and bytes leave in the order they came.

import (
	"math/rand"
	"sync"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

type LinkToxic struct {
	Handshake int64   `json:"handshake"`
	Latency   int64   `json:"latency"`
	Jitter    int64   `json:"jitter"`
	RTT       int64   `json:"rtt"`
	Bitrate   int64   `json:"bitrate"`
	Shared    int64   `json:"shared"`
	IW        int64   `json:"iw"`
	MSS       int64   `json:"mss"`
	RTOMin    int64   `json:"rto_min"`
	Loss      int64   `json:"loss"`
	BurstP    int64   `json:"burst_p"`
	BurstR    int64   `json:"burst_r"`
	BurstLoss int64   `json:"burst_loss"`
	Epoch     int64   `json:"epoch"`
	Event     int64   `json:"event"`
	EventOff  int64   `json:"event_offset"`
	EventPer  int64   `json:"event_period"`
	EventLen  int64   `json:"event_length"`
	DipShare  int64   `json:"dip_share"`
	Trace     []int64 `json:"trace"`
	Radio     int64   `json:"radio"`
	Device    int64   `json:"radio_device"`
	Uplink    int64   `json:"uplink"`
	NatIdle   int64   `json:"nat_idle"`

	mu     sync.Mutex  // guards shared
	shared *sharedLink // the proxy's one link in this direction, when Shared is 1
}

const (
	defaultRTOMin = 200 * time.Millisecond // Linux TCP_RTO_MIN
	ppm           = 1e6
)

type linkState struct {
	sender *tcpSender
	timer  *preciseTimer
	closed bool // the input has ended: let the rest out, then close
	dead   bool // a move killed the connection silently: nothing passes again
	// passedClose: a WebSocket close frame was let through the dead connection (die)
	passedClose bool
	slept       bool // the timer was set short of a long wait: the rest is spun
	// radioAt: when the radio let this direction's last chunk go (radio.go):
	// a later chunk never goes before it
	radioAt time.Time
	// nat: the connection's NAT mapping, shared with the other direction
	// under patch 0004 (natID; nat.go)
	nat   *natCell
	natID string
	// early: the phone's chunks that came before its handshake was done (uplink with a
	// radio): a phone sends them once the SYN-ACK is back, so they go through the radio
	// then (releaseEarly), not when k6's write reached the proxy, which accepts at once
	early [][]byte
}

// A wait longer than spinAfter (an answer's latency, not the pace of a transfer)
// ends spinMargin early and the goroutine spins the rest: a thread woken from a long
// sleep, and the goroutine it wakes, came ~0.15 ms late on the pack's 2-core VM
// (44 us after 2 ms, 89 us after 14 ms, 150 us after 35 ms: clock.go's timer,
// median); a running goroutine lets the bytes out on time and hands them to the
// writer on its own thread. At most spinMargin of CPU per answer.
const (
	spinAfter  = 2 * time.Millisecond
	spinMargin = 250 * time.Microsecond
)

func (t *LinkToxic) NewState() interface{} {
	return &linkState{sender: newTCPSender(t.opened(time.Now()), rand.Int63()), timer: newPreciseTimer()}
}

// opened: when a connection accepted at `now` starts its handshake. Its SYN is
// the phone's packet: on an idle radio the handshake starts when the promotion
// ends (the uplink toxic sends it; the downlink's state, made just after for
// the same connection, waits for the same promotion).
func (t *LinkToxic) opened(now time.Time) time.Time {
	r := radioFor(t.Device, radioKind(t.Radio))
	if r == nil {
		return now
	}
	if t.Uplink == 1 {
		return r.send(now, true, 0)
	}
	return r.ready(now)
}

// throughRadio: when a chunk that reached the toxic at `at` may go, after the radio.
func (t *LinkToxic) throughRadio(st *linkState, r *radio, at time.Time, n int) time.Time {
	if r == nil {
		return at
	}
	at = r.send(at, t.Uplink == 1, n)
	if at.Before(st.radioAt) {
		at = st.radioAt // in order: TCP's queue takes its chunks one after another
	}
	st.radioAt = at
	return at
}

// releaseEarly: once the handshake is done, the chunks that came before it go through
// the radio, in order, at that moment. Seen by the radio when k6 wrote them, a fresh
// connection's request was R older than it is on a phone, and its answer, more than
// LTE's DRX inactivity timer (100 ms) after it, waited for an on-period: lte+rrc's
// http_fresh rows read 154-162 ms against the model's 143 (bench/mobile.js, five
// records, 2026-11-29/30).
func (t *LinkToxic) releaseEarly(st *linkState, r *radio, open, now time.Time) {
	if len(st.early) == 0 {
		return
	}
	if now.Before(open) {
		return
	}
	for _, data := range st.early {
		st.sender.push(data, t.throughRadio(st, r, open, len(data)))
	}
	st.early = nil
}

// Buffer like the latency toxic, so the reader never waits on this toxic.
func (t *LinkToxic) GetBufferSize() int { return 1024 }

// config reads the attributes once per run: an update (UpdateToxicJson)
// rewrites them before it interrupts the running toxics, never while a run reads them.
func (t *LinkToxic) config() linkConfig {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	prob := func(v int64) float64 {
		if v < 0 {
			return 0
		}
		if v > ppm {
			return 1
		}
		return float64(v) / ppm
	}
	c := linkConfig{
		latency:   ms(t.Latency),
		jitter:    ms(t.Jitter),
		rtt:       ms(t.RTT),
		handshake: ms(t.Handshake),
		rate:      float64(t.Bitrate) / 8,
		iw:        int(t.IW),
		mss:       int(t.MSS),
		rtoMin:    ms(t.RTOMin),
		loss:      lossModel{lossGood: prob(t.Loss), lossBad: prob(t.BurstLoss), p: prob(t.BurstP), r: prob(t.BurstR)},
	}
	if c.mss <= 0 {
		c.mss = defaultMSS
	}
	if c.rtoMin <= 0 {
		c.rtoMin = defaultRTOMin
	}
	if c.iw < 0 {
		c.iw = 0
	}
	if t.Epoch > 0 {
		epoch := time.UnixMilli(t.Epoch)
		if t.Event > 0 && t.EventLen > 0 {
			c.events = &linkEvents{
				epoch:  epoch,
				kind:   eventKind(t.Event),
				offset: ms(t.EventOff),
				period: ms(t.EventPer),
				length: ms(t.EventLen),
				share:  prob(t.DipShare),
			}
		}
		c.trace = newLinkTrace(epoch, t.Trace)
	}
	return c
}

// link: the link these bytes share (nil: each connection has its own).
func (t *LinkToxic) link() *sharedLink {
	if t.Shared == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shared == nil {
		t.shared = &sharedLink{}
	}
	return t.shared
}

func (t *LinkToxic) Pipe(stub *toxics.ToxicStub) {
	st := stub.State.(*linkState)
	c := t.config()
	link := t.link()
	r := radioFor(t.Device, radioKind(t.Radio))
	s := st.sender
	defer st.timer.Stop()
	natIdle := time.Duration(t.NatIdle) * time.Millisecond
	if natIdle > 0 && st.nat == nil {
		from := time.Now()
		if s.opened.After(from) {
			from = s.opened
		}
		st.nat, st.natID = natCellFor(stub, from)
	}
	defer t.releaseClosed(stub, st)
	death := c.events.deathAt(s.opened)
	open := c.opensAt(s.opened) // when the handshake is done: fixed for this run (c and s.opened are)
	for {
		now := time.Now()
		if st.nat != nil && st.nat.isDead() {
			st.dead = true // the other direction found the mapping gone
		}
		if st.dead || (!death.IsZero() && !now.Before(death)) {
			kind := eventMoveSilent // a NAT's death is silent
			if c.events != nil {
				kind = c.events.kind
			}
			t.die(stub, st, kind)
			return
		}
		t.releaseEarly(st, r, open, now)
		nextSend := s.advance(now, &c, link)
		if due := s.due(now); len(due) > 0 {
			for i, p := range due {
				select {
				case stub.Output <- &stream.StreamChunk{Data: p.data, Timestamp: p.deliver}:
				case <-stub.Interrupt:
					s.out = append(due[i:len(due):len(due)], s.out...) // still to go, first
					return
				}
			}
			continue // time has passed while sending: look again
		}
		if st.closed && !s.pending() && len(st.early) == 0 {
			stub.Close()
			return
		}
		wake := s.next()
		if !nextSend.IsZero() && (wake.IsZero() || nextSend.Before(wake)) {
			wake = nextSend
		}
		if len(st.early) > 0 && (wake.IsZero() || open.Before(wake)) {
			wake = open
		}
		if !death.IsZero() && (wake.IsZero() || death.Before(wake)) {
			wake = death
		}
		var fired <-chan time.Time
		if !wake.IsZero() {
			wait := time.Until(wake)
			if wait <= spinMargin && st.slept {
				// The last stretch after a long sleep: waking a thread that slept that
				// long took ~0.15 ms on the pack's (virtual) machine, more than this.
				for time.Now().Before(wake) {
				}
				st.slept = false
				continue
			}
			st.slept = wait > spinAfter
			if st.slept {
				st.timer.Reset(wake.Add(-spinMargin))
			} else {
				st.timer.Reset(wake)
			}
			fired = st.timer.C
		}
		input := stub.Input
		if st.closed {
			input = nil
		}
		select {
		case <-stub.Interrupt:
			return
		case chunk := <-input:
			now := time.Now()
			at := now
			if chunk != nil {
				at = arrival(chunk, now)
			}
			if st.nat != nil && !st.nat.pass(at, natIdle) {
				st.dead = true // the NAT forgot the connection: this chunk (or close) is lost, and all after it
				if chunk != nil && r != nil && t.Uplink == 1 {
					// The phone's radio sent it (the NAT is beyond the radio): it woke the
					// radio all the same. A server's chunk dies before it reaches the phone.
					r.send(at, true, len(chunk.Data))
				}
				continue
			}
			if chunk == nil {
				st.closed = true
				continue
			}
			if r != nil && t.Uplink == 1 && (len(st.early) > 0 || at.Before(open)) {
				st.early = append(st.early, chunk.Data)
				continue
			}
			s.push(chunk.Data, t.throughRadio(st, r, at, len(chunk.Data)))
		case <-fired:
		}
	}
}

// die: a move killed the connection. Announced, the proxy resets it (patch
// 0003). Silent, everything held is dropped and everything that comes is too,
// and an end that closes is not heard by the other either (its FIN is lost like
// the rest): the proxy lets the connection's sockets go deadHold after an end
// closed, or when the toxic is interrupted (the next run of Pipe lands here
// again: the death outlives a profile update).
//
// One exception, for k6: its WebSocket close waits for the server's close frame
// with no timeout (a real client's close() returns at once: its kernel sends the
// FIN, which is lost, and gives up later), so a k6 VU could never end with a dead
// socket. The closing handshake of a plain WebSocket passes: the client's close
// frame reaches the server, the server's reaches the client, and the connection
// closes. TLS hides it (wss: docs/known-limits.md).
func (t *LinkToxic) die(stub *toxics.ToxicStub, st *linkState, kind eventKind) {
	st.sender.drain()
	st.early = nil
	if kind == eventMoveReset && !st.dead {
		// Asserted, not called, so the toxic still builds on an unpatched
		// module (the churn test's control build), where the close is a FIN.
		if r, ok := interface{}(stub).(interface{ CloseWithReset() }); ok {
			r.CloseWithReset()
		} else {
			stub.Close()
		}
		return
	}
	st.dead = true
	var hold <-chan time.Time
	input := stub.Input
	for {
		select {
		case <-stub.Interrupt:
			return
		case <-hold:
			stub.Close()
			return
		case chunk, open := <-input:
			if !open || chunk == nil {
				if st.passedClose {
					stub.Close()
					return
				}
				if hold == nil {
					hold = time.After(deadHold)
				}
				input = nil // the end came: wait on the hold alone
				continue
			}
			client, server := webSocketCloses(chunk.Data)
			if !client && !server {
				continue
			}
			select {
			case stub.Output <- chunk:
			case <-stub.Interrupt:
				return
			}
			st.passedClose = true
			if server {
				stub.Close() // the handshake's last frame: the connection ends
				return
			}
		}
	}
}

// releaseClosed lets the connection's NAT cell go when this direction has ended.
func (t *LinkToxic) releaseClosed(stub *toxics.ToxicStub, st *linkState) {
	if st.natID != "" && stub.Closed() {
		releaseNATCell(st.natID)
		st.natID = ""
	}
}

// deadHold: how long a silently dead connection keeps its sockets after one end
// closed (that end's FIN is lost; the other end's client or server gives up on
// its own timeout before this, the pack's clients at 10 s: common/policies.js).
const deadHold = 30 * time.Second

// webSocketCloses: whether the chunk holds a WebSocket close frame from a client
// (masked, as every client frame is; RFC 6455 5.2, 5.5.1) or from a server
// (unmasked). It is read as whole frames from its first byte (a client's close
// usually follows its last message, graphql-ws's complete, in the same read); a
// chunk that does not parse so holds no close.
func webSocketCloses(data []byte) (client, server bool) {
	for len(data) >= 2 {
		op, masked, n := data[0]&0x0f, data[1]&0x80 != 0, uint64(data[1]&0x7f)
		if data[0]&0x70 != 0 {
			return false, false // reserved bits: not a frame boundary
		}
		if op == 0x8 {
			return masked, !masked
		}
		head := 2
		switch n {
		case 126:
			if len(data) < 4 {
				return false, false
			}
			n, head = uint64(data[2])<<8|uint64(data[3]), 4
		case 127:
			if len(data) < 10 {
				return false, false
			}
			n = 0
			for _, b := range data[2:10] {
				n = n<<8 | uint64(b)
			}
			head = 10
		}
		if masked {
			head += 4
		}
		size := uint64(head) + n
		if size > uint64(len(data)) {
			return false, false
		}
		data = data[size:]
	}
	return false, false
}

// arrival: when a chunk reached this toxic (its timestamp, unless a toxic before
// this one moved it into the future).
func arrival(c *stream.StreamChunk, now time.Time) time.Time {
	if c.Timestamp.IsZero() || c.Timestamp.After(now) {
		return now
	}
	return c.Timestamp
}

// Cleanup runs when the toxic is removed, after its run was interrupted: what
// it still holds goes out now, in order (the stub's input follows it).
func (t *LinkToxic) Cleanup(stub *toxics.ToxicStub) {
	st, ok := stub.State.(*linkState)
	if !ok {
		return
	}
	st.timer.Stop()
	early := st.early
	st.early = nil
	for _, data := range append(st.sender.drain(), early...) {
		if err := stub.WriteOutput(&stream.StreamChunk{Data: data, Timestamp: time.Now()}, 5*time.Second); err != nil {
			return // nothing reads the output any more (patch 0002 drains a closed stub)
		}
	}
}
