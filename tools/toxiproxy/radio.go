package main

// Radio states (RRC) in the link toxic, issue 41: a phone's radio sleeps. The
// first packet after an idle gap waits for the radio's promotion; after the
// last packet the radio stays up for its tail, then goes idle; in LTE's tail
// the radio listens in DRX on-periods only. Parameters: radio_params.go.
//
//	radio         0 none, 1 LTE (RRC_IDLE, RRC_CONNECTED with DRX), 2 3G (IDLE, FACH, DCH)
//	radio_device  which radio: every link toxic with the same device and radio
//	              shares one state (the profile gives every proxy the same)
//
// The radio belongs to the device, not to a connection: every connection of
// every proxy, both directions, drives and waits for the same radio. Toxiproxy
// gives a toxic no handle on its proxy or on the other direction (a `+shared`
// link is the proxy's toxic's own, one direction), so the radios live in a
// package-level registry keyed by (radio_device, radio).
//
// A chunk enters the radio when it reaches the link toxic, before the link's
// latency and bandwidth: the radio decides when it may go (send), then TCP's
// model (tcp.go) carries it. A new connection's SYN is a packet too: a
// connection opened on an idle radio starts its handshake when the promotion
// ends (linkState's opened).
//
// LTE, after [H12]: a packet that finds RRC_IDLE waits `promotion`; the radio
// is then RRC_CONNECTED until `tail` after its last packet. A downlink packet
// that comes more than drxInactivity after the last packet finds the radio in
// DRX and waits for the next on-period: of the short cycle within shortTimer
// after the inactivity timer, of the long cycle after it. The on-periods are
// at whole multiples of the cycle in Unix time (LTE aligns them to the frame
// number, TS 36.321 5.7), so the wait is deterministic: the time to the next
// multiple, 0 inside an on-duration, at most one cycle. An uplink packet does
// not wait for DRX: the phone may ask for a grant at any time.
//
// 3G (UMTS), after [Q10]: a packet that finds IDLE waits `promotion` and the
// radio is in DCH; DCH stays until `tail` after the last packet, then FACH;
// FACH stays until fachTail after its last packet, then IDLE. In FACH, a
// packet that keeps its direction's RLC buffer (the bytes FACH has not carried
// yet) within the threshold is carried by FACH, slowly (fachDrain); one that
// passes it promotes the radio to DCH (fachPromotion) and waits for it.
//
// Not modelled: the paging delay of a downlink packet that finds LTE idle (up
// to one idle DRX cycle, 1.28 s in [H12]), the promotion's own variance, 3G's
// DCH timer reset threshold, fast dormancy.
//
// Every transition goes to the radio's event log with its time: a promotion's
// start and end, a tail's start (the last packet before a quiet gap longer than
// tailQuiet), a resume (the first packet after such a gap, within the tail: the
// radio is busy again, at the time the packet goes; in FACH, when FACH starts
// carrying it), a demotion. Between a promotion's end (or a resume) and the
// next tail-start the radio is busy; from a tail-start to the next resume,
// promotion or demotion it is in its tail. Timers run
// out between packets, so the radio applies them when it next looks (a packet,
// or a reader of the log): each event carries the time it happened, not the
// time it was noticed.

import (
	"sync"
	"time"
)

// RadioEvent: one transition of a radio.
type RadioEvent struct {
	At   time.Time
	Kind string // promotion-start, promotion-end, tail-start, resume, demotion
	From string // the state it leaves (tail-start: the state whose tail starts)
	To   string // the state it enters
}

const (
	eventPromotionStart = "promotion-start"
	eventPromotionEnd   = "promotion-end"
	eventTailStart      = "tail-start"
	eventResume         = "resume" // a packet within the tail, after a logged tail-start: the radio is busy again
	eventDemotion       = "demotion"

	stateIdle      = "idle"
	stateConnected = "connected" // LTE RRC_CONNECTED
	stateFACH      = "fach"
	stateDCH       = "dch"
)

// tailQuiet: a gap after a packet longer than this is logged as a tail (its
// start, at the packet); shorter ones are the transfer going on, so a busy
// link does not log one tail per packet. LTE's DRX inactivity timer.
const tailQuiet = 100 * time.Millisecond

// maxRadioEvents bounds a radio's log (an hour-long soak keeps the last ones).
const maxRadioEvents = 100000

type fachPiece struct {
	n    int
	done time.Time
}

// radio: one device's radio state.
type radio struct {
	mu     sync.Mutex
	p      *radioParams
	state  string
	awake  time.Time // a promotion ends then: nothing goes before it
	last   time.Time // the last packet went at this time (the tail counts from it)
	since  time.Time // when the radio entered its state
	tailAt time.Time // the packet whose tail was logged
	fach   [2][]fachPiece
	log    []RadioEvent
	// dropped: the oldest events the log let go (maxRadioEvents)
	dropped int
}

func newRadio(p *radioParams) *radio { return &radio{p: p, state: stateIdle} }

func (r *radio) upState() string {
	if r.p.kind == radioUMTS {
		return stateDCH
	}
	return stateConnected
}

func (r *radio) record(at time.Time, kind, from, to string) {
	if len(r.log) >= maxRadioEvents {
		r.dropped += len(r.log) / 2
		r.log = append(r.log[:0], r.log[len(r.log)/2:]...)
	}
	r.log = append(r.log, RadioEvent{At: at, Kind: kind, From: from, To: to})
}

// logTail logs the tail of the last packet once the radio has been quiet past tailQuiet.
func (r *radio) logTail(t time.Time) {
	if r.last.IsZero() || r.tailAt.Equal(r.last) || t.Sub(r.last) <= tailQuiet {
		return
	}
	r.tailAt = r.last
	r.record(r.last, eventTailStart, r.state, r.state)
}

// settle applies the timers that ran out by t.
func (r *radio) settle(t time.Time) {
	for {
		if r.state == stateIdle || t.Before(r.awake) {
			return
		}
		r.logTail(t)
		switch r.state {
		case stateConnected, stateDCH:
			end := r.last.Add(r.p.tail)
			if t.Before(end) {
				return
			}
			to := stateIdle
			if r.state == stateDCH {
				to = stateFACH
			}
			r.record(end, eventDemotion, r.state, to)
			r.state, r.since = to, end
			r.fach = [2][]fachPiece{}
		case stateFACH:
			from := r.last
			if r.since.After(from) {
				from = r.since
			}
			end := from.Add(r.p.fachTail)
			if t.Before(end) {
				return
			}
			r.record(end, eventDemotion, stateFACH, stateIdle)
			r.state, r.since = stateIdle, end
			r.fach = [2][]fachPiece{}
		}
	}
}

// promote starts a promotion at t to the radio's up state and returns its end.
func (r *radio) promote(t time.Time, d time.Duration) time.Time {
	to := r.upState()
	end := t.Add(d)
	r.record(t, eventPromotionStart, r.state, to)
	r.record(end, eventPromotionEnd, r.state, to)
	r.state, r.since, r.awake, r.last, r.tailAt = to, end, end, end, time.Time{}
	r.fach = [2][]fachPiece{}
	return end
}

// send: a packet of n bytes reaches the radio at t (up: from the phone); it
// may go at the returned time, and the radio counts it as activity then.
func (r *radio) send(t time.Time, up bool, n int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settle(t)
	if r.state == stateIdle {
		return r.promote(t, r.p.promotion)
	}
	at := t
	resumed := !r.last.IsZero() && r.tailAt.Equal(r.last) // the tail of the last packet was logged
	if at.Before(r.awake) {
		at = r.awake
	} else if r.state == stateFACH {
		at = r.sendFACH(t, up, n)
		if r.state == stateDCH {
			return at // promoted: r.last is its end
		}
		if resumed {
			r.record(t, eventResume, stateFACH, stateFACH) // FACH carries it from t
			resumed = false
		}
	} else if r.p.kind == radioLTE && !up {
		at = r.drx(t)
	}
	if resumed && at.After(r.last) {
		r.record(at, eventResume, r.state, r.state)
	}
	if at.After(r.last) {
		r.last = at
	}
	return at
}

// drx: when a downlink packet reaching the radio at t is received (LTE).
func (r *radio) drx(t time.Time) time.Time {
	if t.Before(r.last) {
		return r.last // asleep until an earlier packet's on-period: received with it
	}
	gap := t.Sub(r.last)
	if gap <= r.p.drxInactivity {
		return t // continuous reception
	}
	cycle := r.p.longCycle
	if gap <= r.p.drxInactivity+r.p.shortTimer {
		cycle = r.p.shortCycle
	}
	return nextOnPeriod(t, cycle, r.p.onDuration)
}

// nextOnPeriod: t if it falls in an on-duration (they start at whole multiples
// of cycle in Unix time), else the start of the next one.
func nextOnPeriod(t time.Time, cycle, on time.Duration) time.Time {
	if cycle <= 0 {
		return t
	}
	phase := time.Duration(t.UnixNano() % int64(cycle))
	if phase < on {
		return t
	}
	return t.Add(cycle - phase)
}

// sendFACH: a packet in FACH, carried by it or promoting the radio to DCH.
func (r *radio) sendFACH(t time.Time, up bool, n int) time.Time {
	dir, limit := 1, r.p.rlcDown
	if up {
		dir, limit = 0, r.p.rlcUp
	}
	pending, queueEnd := 0, t
	kept := r.fach[dir][:0]
	for _, p := range r.fach[dir] {
		if p.done.After(t) {
			kept = append(kept, p)
			pending += p.n
			if p.done.After(queueEnd) {
				queueEnd = p.done
			}
		}
	}
	r.fach[dir] = kept
	if pending+n > limit {
		return r.promote(t, r.p.fachPromotion)
	}
	done := queueEnd.Add(fachDrain(up, n))
	r.fach[dir] = append(r.fach[dir], fachPiece{n: n, done: done})
	return done
}

// events: the log, with the timers that ran out by now applied.
func (r *radio) events(now time.Time) []RadioEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settle(now)
	return append([]RadioEvent(nil), r.log...)
}

// The registry of radios, by device and technology.
type radioKey struct {
	device int64
	kind   radioKind
}

var radios = struct {
	sync.Mutex
	m map[radioKey]*radio
}{m: map[radioKey]*radio{}}

// radioFor: the device's radio of that kind (nil for none).
func radioFor(device int64, kind radioKind) *radio {
	p := paramsOf(kind)
	if p == nil {
		return nil
	}
	radios.Lock()
	defer radios.Unlock()
	k := radioKey{device, kind}
	r := radios.m[k]
	if r == nil {
		r = newRadio(p)
		radios.m[k] = r
	}
	return r
}

// RadioEvents: the event log of a device's radio, for tests and tools (empty
// when that radio never carried a packet).
func RadioEvents(device int64, kind radioKind, now time.Time) []RadioEvent {
	radios.Lock()
	r := radios.m[radioKey{device, kind}]
	radios.Unlock()
	if r == nil {
		return nil
	}
	return r.events(now)
}

// ready: when the radio can carry a packet that reaches it at t without
// counting it as activity (t, unless a promotion is under way).
func (r *radio) ready(t time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settle(t)
	if t.Before(r.awake) {
		return r.awake
	}
	return t
}
