package main

// The radio states of the link toxic (radio.go): each transition's timing
// against the parameters (radio_params.go), with made-up times; then the one
// radio that every connection and direction of a device shares, on live stubs.

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A radio of its own for each test (the registry is the package's).
var nextDevice int64 = 1000

func freshDevice() int64 { return atomic.AddInt64(&nextDevice, 1) }

// onPeriod: a time that falls exactly at the start of a DRX on-period of every
// cycle (t0 is a whole second).
var onPeriod = t0.Add(time.Hour)

func eventsOf(r *radio, now time.Time) string {
	var b strings.Builder
	for _, e := range r.events(now) {
		fmt.Fprintf(&b, "%v %s %s>%s; ", e.At.Sub(t0), e.Kind, e.From, e.To)
	}
	return b.String()
}

func wantEvents(t *testing.T, r *radio, now time.Time, want ...RadioEvent) {
	t.Helper()
	got := r.events(now)
	if len(got) != len(want) {
		t.Fatalf("events by %v: got %s, want %d events", now.Sub(t0), eventsOf(r, now), len(want))
	}
	for i, w := range want {
		if !got[i].At.Equal(w.At) || got[i].Kind != w.Kind || got[i].From != w.From || got[i].To != w.To {
			t.Fatalf("event %d: got %v %s %s>%s, want %v %s %s>%s (all: %s)", i, got[i].At.Sub(t0), got[i].Kind, got[i].From, got[i].To,
				w.At.Sub(t0), w.Kind, w.From, w.To, eventsOf(r, now))
		}
	}
}

func ev(at time.Time, kind, from, to string) RadioEvent {
	return RadioEvent{At: at, Kind: kind, From: from, To: to}
}

// LTE: a packet on an idle radio waits the promotion (260 ms); the radio stays
// connected for the tail (11.576 s) after its last packet, then goes idle; a
// packet within the tail pays no promotion, one after it does.
func TestLTEPromotionAndTail(t *testing.T) {
	p := lteParams
	r := newRadio(&p)
	start := t0.Add(time.Second)
	if got := r.send(start, true, 100); !got.Equal(start.Add(p.promotion)) {
		t.Fatalf("first packet goes at %v, want the promotion's end %v", got.Sub(start), p.promotion)
	}
	if p.promotion != 260*time.Millisecond || p.tail != 11576*time.Millisecond {
		t.Fatalf("LTE parameters changed: promotion %v, tail %v", p.promotion, p.tail)
	}
	// During the promotion a packet of the other direction waits for it too.
	if got := r.send(start.Add(100*time.Millisecond), false, 100); !got.Equal(start.Add(p.promotion)) {
		t.Fatalf("a packet during the promotion goes at %v, want its end", got.Sub(start))
	}
	last := start.Add(p.promotion)
	// Within the tail: no promotion (uplink: no DRX either).
	within := last.Add(p.tail - time.Millisecond)
	if got := r.send(within, true, 100); !got.Equal(within) {
		t.Fatalf("a packet %v after the last one waited %v, want none (in the tail)", p.tail-time.Millisecond, got.Sub(within))
	}
	wantEvents(t, r, within.Add(p.tail),
		ev(start, eventPromotionStart, stateIdle, stateConnected),
		ev(last, eventPromotionEnd, stateIdle, stateConnected),
		ev(last, eventTailStart, stateConnected, stateConnected),
		ev(within, eventResume, stateConnected, stateConnected), // busy again within the tail
		ev(within, eventTailStart, stateConnected, stateConnected),
		ev(within.Add(p.tail), eventDemotion, stateConnected, stateIdle),
	)
	// Past the tail: idle, so the next packet is promoted again.
	after := within.Add(p.tail + time.Millisecond)
	if got := r.send(after, true, 100); !got.Equal(after.Add(p.promotion)) {
		t.Fatalf("a packet after the tail goes at +%v, want the promotion %v", got.Sub(after), p.promotion)
	}
}

// LTE's DRX: a downlink packet in the tail waits for the next on-period: none
// within the inactivity timer (100 ms), at most a short cycle (20 ms) within
// the short cycle timer after it, at most a long cycle (40 ms) later; the wait
// is the time to the next whole multiple of the cycle, the same every run.
// Uplink packets never wait for DRX.
func TestLTEDRXWaitIsBoundedAndDeterministic(t *testing.T) {
	p := lteParams
	// The last packet goes at onPeriod, a whole second: a multiple of both cycles.
	for _, k := range []struct{ gap, want time.Duration }{
		{50 * time.Millisecond, 0},                              // continuous reception
		{100 * time.Millisecond, 0},                             // at the inactivity timer: still continuous
		{107 * time.Millisecond, 13 * time.Millisecond},         // short DRX: 7 ms into its 20 ms cycle
		{120 * time.Millisecond, 0},                             // short DRX, inside an on-duration
		{101500 * time.Microsecond, 18500 * time.Microsecond},   // just past an on-duration: almost a cycle
		{121 * time.Millisecond, 39 * time.Millisecond},         // long DRX: 1 ms into its 40 ms cycle, the on-duration over
		{507 * time.Millisecond, 13 * time.Millisecond},         // long DRX: 27 ms into it
		{5039 * time.Millisecond, time.Millisecond},             // late in the cycle
		{11001500 * time.Microsecond, 38500 * time.Microsecond}, // near the tail's end
	} {
		for run := 0; run < 2; run++ {
			r := newRadio(&p)
			r.send(onPeriod.Add(-p.promotion), true, 10) // its promotion ends at onPeriod: the last packet
			at := onPeriod.Add(k.gap)
			got := r.send(at, false, 100).Sub(at)
			if got != k.want {
				t.Fatalf("run %d: a downlink packet %v after the last waited %v, want %v", run, k.gap, got, k.want)
			}
			if got > p.longCycle {
				t.Fatalf("a DRX wait of %v is more than one long cycle", got)
			}
		}
	}
	r := newRadio(&p)
	r.send(onPeriod.Add(-p.promotion), true, 10)
	up := onPeriod.Add(5*time.Second + 7*time.Millisecond)
	if got := r.send(up, true, 100); !got.Equal(up) {
		t.Fatalf("an uplink packet in DRX waited %v, want none", got.Sub(up))
	}
	// A downlink packet that comes while an earlier one waits for its on-period
	// is received with it, not before.
	first := onPeriod.Add(8*time.Second + 7*time.Millisecond)
	a := r.send(first, false, 100)
	b := r.send(first.Add(10*time.Millisecond), false, 100)
	if !a.Equal(first.Add(33*time.Millisecond)) || !b.Equal(a) {
		t.Fatalf("two downlink packets in one DRX cycle go at +%v and +%v, want both at +33ms", a.Sub(first), b.Sub(first))
	}
}

// 3G: IDLE -> DCH takes 2 s; DCH falls to FACH 5 s after the last packet and
// FACH to IDLE 12 s later; in FACH a small packet is carried there (slowly), and
// one that passes the direction's RLC buffer threshold promotes the radio to DCH
// (1.5 s).
func TestUMTSStateMachine(t *testing.T) {
	p := umtsParams
	if p.promotion != 2*time.Second || p.fachPromotion != 1500*time.Millisecond || p.tail != 5*time.Second || p.fachTail != 12*time.Second {
		t.Fatalf("3G parameters changed: %+v", p)
	}
	r := newRadio(&p)
	start := t0.Add(time.Second)
	dch := r.send(start, true, 1000)
	if !dch.Equal(start.Add(2 * time.Second)) {
		t.Fatalf("IDLE -> DCH: the packet goes at +%v, want +2s", dch.Sub(start))
	}
	fach := dch.Add(p.tail)
	idle := fach.Add(p.fachTail)
	wantEvents(t, r, idle,
		ev(start, eventPromotionStart, stateIdle, stateDCH),
		ev(dch, eventPromotionEnd, stateIdle, stateDCH),
		ev(dch, eventTailStart, stateDCH, stateDCH),
		ev(fach, eventDemotion, stateDCH, stateFACH),
		ev(idle, eventDemotion, stateFACH, stateIdle),
	)

	// In FACH: small packets go on FACH, each direction's buffer on its own.
	r = newRadio(&p)
	dch = r.send(start, true, 1000)
	fach = dch.Add(p.tail)
	in := fach.Add(time.Second)
	small := r.send(in, true, 200)
	if want := in.Add(fachDrain(true, 200)); !small.Equal(want) {
		t.Fatalf("200 B up in FACH go at +%v, want FACH's drain time %v", small.Sub(in), fachDrain(true, 200))
	}
	if down := r.send(in, false, 400); !down.Equal(in.Add(fachDrain(false, 400))) {
		t.Fatalf("400 B down in FACH (threshold 475) go at +%v, want %v", down.Sub(in), fachDrain(false, 400))
	}
	// 200 B still in the uplink buffer + 400 B > 540 B: FACH -> DCH.
	more := in.Add(10 * time.Millisecond)
	if got := r.send(more, true, 400); !got.Equal(more.Add(p.fachPromotion)) {
		t.Fatalf("past the uplink threshold: the packet goes at +%v, want the FACH -> DCH promotion %v", got.Sub(more), p.fachPromotion)
	}
	events := r.events(more.Add(p.fachPromotion))
	n := len(events)
	if n < 2 || events[n-2] != ev(more, eventPromotionStart, stateFACH, stateDCH) || events[n-1] != ev(more.Add(p.fachPromotion), eventPromotionEnd, stateFACH, stateDCH) {
		t.Fatalf("the FACH -> DCH promotion is not logged: %s", eventsOf(r, more.Add(p.fachPromotion)))
	}
	// The FACH tail counts from the last packet carried in FACH.
	r = newRadio(&p)
	dch = r.send(start, true, 1000)
	fach = dch.Add(p.tail)
	sent := r.send(fach.Add(3*time.Second), false, 100)
	got := r.events(sent.Add(p.fachTail))
	if last := got[len(got)-1]; last != ev(sent.Add(p.fachTail), eventDemotion, stateFACH, stateIdle) {
		t.Fatalf("FACH -> IDLE: got %s, want it %v after the last packet in FACH", eventsOf(r, sent.Add(p.fachTail)), p.fachTail)
	}
	// Exactly the threshold stays on FACH; one byte more promotes.
	r = newRadio(&p)
	dch = r.send(start, true, 1000)
	at := dch.Add(p.tail + time.Second)
	if got := r.send(at, false, p.rlcDown); !got.Equal(at.Add(fachDrain(false, p.rlcDown))) {
		t.Fatalf("%d B down (the threshold) promoted the radio", p.rlcDown)
	}
	r = newRadio(&p)
	dch = r.send(start, true, 1000)
	if got := r.send(at, false, p.rlcDown+1); !got.Equal(at.Add(p.fachPromotion)) {
		t.Fatalf("%d B down (one over the threshold) went at +%v, want the promotion", p.rlcDown+1, got.Sub(at))
	}
}

// The radio belongs to the device: connections of different proxies, in both
// directions, share it. A connection's SYN wakes it: the handshake starts when
// the promotion ends.
func TestEveryConnectionOfADeviceSharesItsRadio(t *testing.T) {
	device := freshDevice()
	upA := &LinkToxic{Radio: int64(radioLTE), Device: device, Uplink: 1}
	downB := &LinkToxic{Radio: int64(radioLTE), Device: device}
	other := &LinkToxic{Radio: int64(radioLTE), Device: freshDevice(), Uplink: 1}

	opened := time.Now()
	a := newPipe(upA) // the connection's SYN promotes the radio
	doneA := a.run()
	a.send("request")
	recv(t, a.out)
	assertWait(t, "first packet of a device: the promotion", time.Since(opened), lteParams.promotion)

	b := newPipe(downB) // another proxy's connection, the other direction
	doneB := b.run()
	start := time.Now()
	b.send("answer")
	recv(t, b.out)
	assertWait(t, "another connection within the tail: no promotion", time.Since(start), 0)

	// Timed from before the connection opens: its SYN starts the promotion (as for a
	// above), so a clock read after run() came short of it on a busy machine (259.6 ms).
	start = time.Now()
	c := newPipe(other) // another device's radio is idle
	doneC := c.run()
	c.send("x")
	recv(t, c.out)
	assertWait(t, "another device: its own promotion", time.Since(start), lteParams.promotion)

	events := RadioEvents(device, radioLTE, time.Now())
	promotions := 0
	for _, e := range events {
		if e.Kind == eventPromotionStart {
			promotions++
		}
	}
	if promotions != 1 {
		t.Fatalf("the device's radio was promoted %d times, want once: %+v", promotions, events)
	}
	a.close(t, doneA)
	b.close(t, doneB)
	c.close(t, doneC)
}

// A fresh connection's first chunk goes through the radio when the handshake is
// done, as a phone sends it once the SYN-ACK is back, not when the write reached
// the proxy (which accepts at once). Seen at the write, the request was a
// handshake older than on a phone, and under lte+rrc the answer to a fresh
// connection's request came past the DRX inactivity timer and waited for an
// on-period (2026-11-30).
func TestLinkEarlyChunkMeetsTheRadioAfterTheHandshake(t *testing.T) {
	const handshake = 150 * time.Millisecond // longer than LTE's DRX inactivity timer (100 ms)
	device := freshDevice()
	start := time.Now()
	up := newPipe(&LinkToxic{Radio: int64(radioLTE), Device: device, Uplink: 1, Handshake: handshake.Milliseconds()})
	done := up.run()
	up.send("request")
	recv(t, up.out)
	assertWait(t, "the request: the SYN's promotion, then the handshake", time.Since(start), lteParams.promotion+handshake)
	r := radioFor(device, radioLTE)
	r.mu.Lock()
	last := r.last
	r.mu.Unlock()
	if got := last.Sub(start); got < lteParams.promotion+handshake {
		t.Fatalf("the radio saw the request %v after the connection opened, want the promotion and the handshake (%v)",
			got.Round(time.Millisecond), lteParams.promotion+handshake)
	}
	up.close(t, done)
}
