package main

// The TCP model of the link toxic (tcp.go), driven with made-up times: nothing
// here waits on a clock, so every figure is exact.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// far: a "now" by which everything queued has been sent and let out.
var far = t0.Add(24 * time.Hour)

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// link3g: one direction of the 3g profile (300 ms, 1600 kbit/s), slow start on.
func link3g() linkConfig {
	return linkConfig{latency: 150 * time.Millisecond, rtt: 300 * time.Millisecond, rate: 1600e3 / 8, iw: 14600, mss: 1460, rtoMin: 200 * time.Millisecond}
}

func payload(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// sendAll pushes data at `at`, sends and lets out everything, and returns the
// pieces in order with the times they were let out.
func sendAll(s *tcpSender, c *linkConfig, at time.Time, data []byte) []*piece {
	s.push(data, at)
	s.advance(far, c, nil)
	return s.due(far)
}

func lastOut(pieces []*piece) time.Time { return pieces[len(pieces)-1].deliver }

func joined(pieces []*piece) []byte {
	var b bytes.Buffer
	for _, p := range pieces {
		b.Write(p.data)
	}
	return b.Bytes()
}

func near(got, want time.Duration) bool {
	return math.Abs(float64(got-want)) < float64(10*time.Microsecond)
}

// The rounds tcp.go sends a message in are the model's (common/model.js
// windowRounds), case by case from testdata/slowstart.json: the last byte of a
// message arrives latency + bytes/rate + the model's wait after it was written,
// and the same message again one round trip after the first left waits the
// model's secondWaitMs.
func TestSlowStartMatchesTheModel(t *testing.T) {
	raw, err := os.ReadFile("testdata/slowstart.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Cases []struct {
			Link         string   `json:"link"`
			RTTMs        float64  `json:"rttMs"`
			Kbps         *float64 `json:"kbps"`
			IW           int      `json:"iw"`
			Bytes        int      `json:"bytes"`
			WaitMs       float64  `json:"waitMs"`
			WindowAfter  float64  `json:"windowAfter"`
			SecondWaitMs float64  `json:"secondWaitMs"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	if len(fixture.Cases) < 50 {
		t.Fatalf("only %d cases in testdata/slowstart.json", len(fixture.Cases))
	}
	for _, k := range fixture.Cases {
		c := linkConfig{latency: ms(k.RTTMs / 2), rtt: ms(k.RTTMs), iw: k.IW, mss: 1460, rtoMin: 200 * time.Millisecond}
		if k.Kbps != nil {
			c.rate = *k.Kbps * 1000 / 8
		}
		name := fmt.Sprintf("%s iw=%d %dB", k.Link, k.IW, k.Bytes)
		s := newTCPSender(t0, 1)
		data := payload(k.Bytes, 2)
		pieces := sendAll(s, &c, t0, data)
		if !bytes.Equal(joined(pieces), data) {
			t.Fatalf("%s: the bytes came out changed", name)
		}
		wait := lastOut(pieces).Sub(t0) - c.latency - c.serialize(k.Bytes)
		if !near(wait, ms(k.WaitMs)) {
			t.Errorf("%s: the window added %v, the model %v ms", name, wait, k.WaitMs)
		}
		// The same message again, a round trip after the first one's last byte left:
		// its first round starts on the window the first one left.
		at := s.lastSendEnd.Add(c.rtt)
		s.push(data, at)
		s.advance(at, &c, nil)
		if math.Abs(float64(s.cwnd)-k.WindowAfter) > 1 {
			t.Errorf("%s: window %d after the first message, model %v", name, s.cwnd, k.WindowAfter)
		}
		s.advance(far, &c, nil)
		pieces = s.due(far)
		wait = lastOut(pieces).Sub(at) - c.latency - c.serialize(k.Bytes)
		if !near(wait, ms(k.SecondWaitMs)) {
			t.Errorf("%s: the second message waited %v for the window, the model %v ms", name, wait, k.SecondWaitMs)
		}
	}
}

// Slow start: rounds of 10, 20, 40 segments one round trip apart, each delivered
// at its round's start + its bytes' time on the link + the latency.
func TestWindowDoublesEveryRoundTrip(t *testing.T) {
	c := link3g()
	s := newTCPSender(t0, 1)
	pieces := sendAll(s, &c, t0, payload(14600*7, 3)) // 10 + 20 + 40 segments
	for i, want := range []struct {
		offset int
		at     time.Duration
	}{
		{14600, c.latency + c.serialize(14600)},                 // end of round 1
		{14600 + 29200, c.rtt + c.latency + c.serialize(29200)}, // end of round 2
		{14600 * 7, 2*c.rtt + c.latency + c.serialize(58400)},   // end of round 3
	} {
		at := deliveredAt(pieces, want.offset)
		if !near(at.Sub(t0), want.at) {
			t.Errorf("round %d: byte %d arrived at %v, want %v", i+1, want.offset, at.Sub(t0), want.at)
		}
	}
	if s.cwnd != 58400 {
		t.Errorf("window %d in the third round, want 58400", s.cwnd)
	}
	// Without slow start the same bytes take only their time on the link.
	c.iw = 0
	s = newTCPSender(t0, 1)
	if got, want := lastOut(sendAll(s, &c, t0, payload(14600*7, 3))).Sub(t0), c.latency+c.serialize(14600*7); !near(got, want) {
		t.Errorf("without slow start: %v, want %v", got, want)
	}
}

// deliveredAt: when the byte at offset (counted from 1) was let out.
func deliveredAt(pieces []*piece, offset int) time.Time {
	n := 0
	for _, p := range pieces {
		if n += len(p.data); n >= offset {
			return p.deliver
		}
	}
	return time.Time{}
}

// A window grows only as far as it was used: small messages never open it.
func TestWindowGrowsOnlyAsFarAsItIsUsed(t *testing.T) {
	c := link3g()
	s := newTCPSender(t0, 1)
	at := t0
	for i := 0; i < 20; i++ { // request/response: 2 KB answers, one per round trip
		sendAll(s, &c, at, payload(2000, int64(i)))
		at = at.Add(c.rtt + 10*time.Millisecond)
	}
	s.push(payload(1, 9), at)
	s.advance(far, &c, nil) // the next round starts: the window is counted
	if s.cwnd != 14600 {
		t.Errorf("window %d after 20 answers of 2 KB, want the initial 14600", s.cwnd)
	}
	// 43.8 KB (3 windows) then the same again: the second one fits the grown window.
	s = newTCPSender(t0, 1)
	sendAll(s, &c, t0, payload(43800, 1))
	at = s.lastSendEnd.Add(c.rtt)
	p := sendAll(s, &c, at, payload(43800, 2))
	if got, want := lastOut(p).Sub(at), c.latency+c.serialize(43800); !near(got, want) {
		t.Errorf("second 43.8 KB message: %v, want %v (no wait for the window)", got, want)
	}
	// The window never grows past the bandwidth-delay product plus a segment.
	s = newTCPSender(t0, 1)
	sendAll(s, &c, t0, payload(2000000, 1))
	if cap := c.windowCap(); s.cwnd != cap || cap != 60000+1460 {
		t.Errorf("window %d after 2 MB, cap %d, want 61460", s.cwnd, cap)
	}
}

// After an idle period longer than the retransmission timeout the window starts
// over (Linux halves it once per RTO of idle, down to the initial window); a
// shorter pause keeps it.
func TestIdleRestart(t *testing.T) {
	c := link3g()
	rto := c.rto(1000) // a steady connection's: RTT + 200 ms
	if rto != 500*time.Millisecond {
		t.Fatalf("steady RTO %v, want 500ms", rto)
	}
	for _, k := range []struct {
		idle time.Duration
		want int64
	}{
		{rto - 10*time.Millisecond, 61460},   // kept
		{rto + 10*time.Millisecond, 30730},   // Linux: halved once per RTO the idle time exceeds
		{2*rto + 10*time.Millisecond, 15365}, // halved twice
		{3*rto + 10*time.Millisecond, 14600}, // down to the initial window
		{2 * time.Second, 14600},
	} {
		s := newTCPSender(t0, 1)
		sendAll(s, &c, t0, payload(1000000, 1))
		s.push(payload(100, 2), s.lastSendEnd.Add(k.idle))
		s.advance(far, &c, nil)
		if s.cwnd != k.want {
			t.Errorf("idle %v: window %d, want %d", k.idle, s.cwnd, k.want)
		}
	}
	// After 2 s idle a 100 KB answer costs what it costs on a new connection.
	fresh := newTCPSender(t0, 1)
	want := lastOut(sendAll(fresh, &c, t0, payload(100000, 1))).Sub(t0)
	s := newTCPSender(t0, 1)
	sendAll(s, &c, t0, payload(1000000, 1))
	at := s.lastSendEnd.Add(2 * time.Second)
	if got := lastOut(sendAll(s, &c, at, payload(100000, 2))).Sub(at); !near(got, want) {
		t.Errorf("100 KB after 2 s idle: %v, on a new connection %v", got, want)
	}
}

// drops scripts the loss draws: the n-th draw (segments in order, then the
// retransmission draws of a lost one) is a loss when it is in lost.
func drops(lost ...int) func() bool {
	set := map[int]bool{}
	for _, n := range lost {
		set[n] = true
	}
	n := 0
	return func() bool {
		n++
		return set[n]
	}
}

// A segment with three segments after it is retransmitted one round trip after
// the third of them left (fast retransmit), and every byte after it waits for it.
func TestFastRetransmitAndHeadOfLineBlocking(t *testing.T) {
	c := link3g()
	s := newTCPSender(t0, 1)
	s.drop = drops(5) // segment 5 lost (draw 5), its retransmission arrives (draw 6)
	data := payload(14600, 4)
	pieces := sendAll(s, &c, t0, data)
	if !bytes.Equal(joined(pieces), data) {
		t.Fatal("the bytes came out changed")
	}
	seg := c.serialize(1460)
	end8 := 9 * seg // segment 8 leaves after 5's retransmission has taken its time on the link too
	want := end8 + c.rtt + seg + c.latency
	if got := deliveredAt(pieces, 4*1460+1).Sub(t0); !near(got, want) {
		t.Errorf("lost segment 5 arrived at %v, want %v (fast retransmit)", got, want)
	}
	if got := deliveredAt(pieces, 4*1460); !near(got.Sub(t0), 4*seg+c.latency) {
		t.Errorf("segment 4 arrived at %v, before the loss, want %v", got.Sub(t0), 4*seg+c.latency)
	}
	for off := 5*1460 + 1; off <= len(data); off += 1460 {
		if got := deliveredAt(pieces, off).Sub(t0); got < want {
			t.Errorf("byte %d arrived at %v, before the lost segment ahead of it (%v)", off, got, want)
		}
	}
}

// A loss among the last three segments of a message cannot be detected by
// duplicate ACKs: it waits for the retransmission timeout (RTT + 200 ms), and a
// lost retransmission waits twice that again.
func TestTailLossWaitsForTheTimeout(t *testing.T) {
	c := link3g()
	seg := c.serialize(1460)
	rto := c.rto(0) // the first round of a connection: RTT + max(2 RTT, 200 ms)
	if rto != 900*time.Millisecond || c.rto(1) != 800*time.Millisecond || c.rto(1000) != 500*time.Millisecond {
		t.Fatalf("RTO %v after the handshake, %v a round later, %v steady; want 900ms, 800ms, 500ms", rto, c.rto(1), c.rto(1000))
	}
	for _, k := range []struct {
		name  string
		drops []int
		want  time.Duration // when the last segment's bytes arrive
	}{
		{"last segment lost", []int{10}, 10*seg + rto + seg + c.latency},
		{"its retransmission lost too", []int{10, 11}, 10*seg + 3*rto + seg + c.latency},
		{"lost three times", []int{10, 11, 12}, 10*seg + 7*rto + seg + c.latency},
	} {
		s := newTCPSender(t0, 1)
		s.drop = drops(k.drops...)
		data := payload(14600, 5)
		pieces := sendAll(s, &c, t0, data)
		if !bytes.Equal(joined(pieces), data) {
			t.Fatalf("%s: the bytes came out changed", k.name)
		}
		if got := lastOut(pieces).Sub(t0); !near(got, k.want) {
			t.Errorf("%s: arrived at %v, want %v", k.name, got, k.want)
		}
	}
	// Segment 8 of 10 lost: only two after it, so the timeout again.
	s := newTCPSender(t0, 1)
	s.drop = drops(8)
	pieces := sendAll(s, &c, t0, payload(14600, 6))
	if got, want := deliveredAt(pieces, 7*1460+1).Sub(t0), 8*seg+rto+seg+c.latency; !near(got, want) {
		t.Errorf("segment 8 of 10 lost: arrived at %v, want %v (timeout)", got, want)
	}
	// On a steady connection the timeout is RTT + 200 ms.
	s = newTCPSender(t0, 1)
	for i := 0; i <= 40; i++ {
		sendAll(s, &c, t0.Add(time.Duration(i)*c.rtt), payload(100, 1))
	}
	at := t0.Add(41 * c.rtt)
	s.drop = drops(1)
	if got, want := lastOut(sendAll(s, &c, at, payload(100, 2))).Sub(at), c.serialize(100)+500*time.Millisecond+c.serialize(100)+c.latency; !near(got, want) {
		t.Errorf("tail loss on a steady connection: %v, want %v", got, want)
	}
	// On a slow link three later segments take longer than the timeout: it comes
	// first (50 kbit/s: 234 ms a segment).
	c.rate = 50e3 / 8
	seg = c.serialize(1460)
	s = newTCPSender(t0, 1)
	s.drop = drops(2)
	pieces = sendAll(s, &c, t0, payload(14600*2, 7))
	if dupAck := 6*seg + c.rtt; dupAck < 2*seg+rto {
		t.Fatalf("test set-up: the third duplicate ACK (%v) comes before the timeout (%v)", dupAck, 2*seg+rto)
	}
	if got, want := deliveredAt(pieces, 1461).Sub(t0), 2*seg+rto+seg+c.latency; !near(got, want) {
		t.Errorf("slow link: segment 2 arrived at %v, want %v (timeout before the third duplicate ACK)", got, want)
	}
}

// The window halves when a loss is detected by duplicate ACKs and falls to one
// segment after a timeout, once per window, and grows back.
func TestLossReducesTheWindow(t *testing.T) {
	c := link3g()
	s := newTCPSender(t0, 1)
	s.drop = drops(5, 7) // two losses in the first window (segments 5 and 6): one reduction
	sendAll(s, &c, t0, payload(14600, 1))
	at := s.lastSendEnd.Add(c.rtt)
	s.push(payload(100, 2), at)
	s.advance(far, &c, nil)
	// Round 1 used its 14600: the window would have grown to 29200, halved: 14600.
	if s.cwnd != 14600 || s.ssthresh != 14600 {
		t.Errorf("after a fast retransmit: window %d ssthresh %d, want 14600 14600", s.cwnd, s.ssthresh)
	}
	s = newTCPSender(t0, 1)
	s.drop = drops(10) // tail loss: timeout
	sendAll(s, &c, t0, payload(14600, 1))
	s.push(payload(100, 2), s.lastSendEnd.Add(c.rto(0)+c.rtt))
	s.advance(far, &c, nil)
	if s.cwnd != 1460 || s.ssthresh != 14600 {
		t.Errorf("after a timeout: window %d ssthresh %d, want 1460 14600", s.cwnd, s.ssthresh)
	}
	// Congestion avoidance: at ssthresh the window grows a segment per round trip.
	s = newTCPSender(t0, 1)
	s.cwnd, s.ssthresh, s.started = 20000, 20000, true
	s.roundStart = t0.Add(-c.rtt)
	s.roundSent = 20000
	s.lastSendEnd = t0
	s.push(payload(100, 1), t0)
	s.advance(far, &c, nil)
	if s.cwnd != 21460 {
		t.Errorf("congestion avoidance: window %d, want 21460", s.cwnd)
	}
}

// Under every loss pattern the stream comes out whole, in order, byte for byte,
// and never earlier than its time on a lossless link.
func TestEveryByteArrivesInOrder(t *testing.T) {
	models := map[string]lossModel{
		"none":    {},
		"1%":      {lossGood: 0.01},
		"3%":      {lossGood: 0.03},
		"20%":     {lossGood: 0.2},
		"bursts":  {lossGood: 0, lossBad: 1, p: 0.003367, r: 1.0 / 3},
		"90%":     {lossGood: 0.9},
		"gemodel": {lossGood: 0.001, lossBad: 0.7, p: 0.05, r: 0.3},
	}
	for name, m := range models {
		for seed := int64(1); seed <= 5; seed++ {
			c := link3g()
			c.rate = 5e6 / 8
			c.loss = m
			c.jitter = 5 * time.Millisecond
			rng := rand.New(rand.NewSource(seed))
			s := newTCPSender(t0, seed)
			var sent bytes.Buffer
			var got []*piece
			at := t0
			for i := 0; i < 300; i++ {
				chunk := payload(1+rng.Intn(40000), seed*1000+int64(i))
				sent.Write(chunk)
				s.push(chunk, at)
				at = at.Add(time.Duration(rng.Intn(600)) * time.Millisecond)
				s.advance(at, &c, nil)
				got = append(got, s.due(at)...)
			}
			s.advance(far, &c, nil)
			got = append(got, s.due(far)...)
			if s.pending() {
				t.Fatalf("%s seed %d: bytes left behind", name, seed)
			}
			if !bytes.Equal(joined(got), sent.Bytes()) {
				t.Fatalf("%s seed %d: %d bytes out for %d in, or changed", name, seed, len(joined(got)), sent.Len())
			}
			for i := 1; i < len(got); i++ {
				if got[i].deliver.Before(got[i-1].deliver) {
					t.Fatalf("%s seed %d: piece %d out at %v before piece %d at %v", name, seed, i, got[i].deliver, i-1, got[i-1].deliver)
				}
			}
		}
	}
}

// The loss models' rates: Bernoulli at its rate; the Gilbert-Elliott bursts of
// the burst modifier lose 1 % of segments, three in a row on average.
func TestLossModelRates(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n = 2000000
	for _, k := range []struct {
		name        string
		m           lossModel
		rate, burst float64
	}{
		{"loss1", lossModel{lossGood: 0.01}, 0.01, 1 / 0.99},
		{"loss3", lossModel{lossGood: 0.03}, 0.03, 1 / 0.97},
		{"burst", lossModel{lossBad: 1, p: 0.003367, r: 1.0 / 3}, 0.01, 3},
	} {
		var st lossState
		lost, runs, prev := 0, 0, false
		for i := 0; i < n; i++ {
			l := k.m.lost(&st, rng)
			if l {
				lost++
				if !prev {
					runs++
				}
			}
			prev = l
		}
		rate, burst := float64(lost)/n, float64(lost)/float64(runs)
		if math.Abs(rate-k.rate)/k.rate > 0.05 || math.Abs(burst-k.burst)/k.burst > 0.05 {
			t.Errorf("%s: %.4f lost, bursts of %.2f; want %.4f and %.2f", k.name, rate, burst, k.rate, k.burst)
		} else {
			t.Logf("%s: %.4f of segments lost, in bursts of %.2f", k.name, rate, burst)
		}
	}
}

// A shared link: six connections sending at once each get a sixth of it.
func TestSharedLinkSplitsTheRate(t *testing.T) {
	c := link3g()
	c.iw = 0 // the rate alone
	shared := &sharedLink{}
	const n = 100000
	var last time.Time
	senders := make([]*tcpSender, 6)
	for i := range senders {
		senders[i] = newTCPSender(t0, int64(i))
		senders[i].push(payload(n, int64(i)), t0)
	}
	// Send as the toxic does: each connection its bytes as their time comes, by
	// chunks of 16 KB (the reader's), interleaved.
	for _, s := range senders {
		s.queue = splitQueue(s.queue[0], 16384)
	}
	for now := t0; now.Before(far); now = now.Add(time.Millisecond) {
		busy := false
		for _, s := range senders {
			s.advance(now, &c, shared)
			for _, p := range s.due(now) {
				if p.deliver.After(last) {
					last = p.deliver
				}
			}
			busy = busy || s.pending()
		}
		if !busy {
			break
		}
	}
	want := c.latency + c.serialize(6*n)
	if got := last.Sub(t0); got < want-10*time.Millisecond || got > want+c.serialize(16384) {
		t.Errorf("six connections of %d bytes on one shared link: done at %v, want ~%v", n, got, want)
	}
	// Each on its own link: done at the time one alone takes.
	s := newTCPSender(t0, 1)
	if got, want := lastOut(sendAll(s, &c, t0, payload(n, 1))).Sub(t0), c.latency+c.serialize(n); !near(got, want) {
		t.Errorf("one connection alone: %v, want %v", got, want)
	}
}

func splitQueue(q queued, size int) []queued {
	var out []queued
	for len(q.data) > 0 {
		n := size
		if n > len(q.data) {
			n = len(q.data)
		}
		out = append(out, queued{q.data[:n], q.arrived})
		q.data = q.data[n:]
	}
	return out
}

// Nothing leaves before the connection is `handshake` old.
func TestHandshakeHold(t *testing.T) {
	c := link3g()
	c.handshake = 450 * time.Millisecond
	s := newTCPSender(t0, 1)
	if got, want := lastOut(sendAll(s, &c, t0.Add(100*time.Millisecond), payload(100, 1))).Sub(t0), 450*time.Millisecond+c.serialize(100)+c.latency; !near(got, want) {
		t.Errorf("first bytes: %v, want %v", got, want)
	}
	if got, want := lastOut(sendAll(s, &c, t0.Add(time.Second), payload(100, 1))).Sub(t0), time.Second+c.serialize(100)+c.latency; !near(got, want) {
		t.Errorf("later bytes: %v, want %v", got, want)
	}
}
