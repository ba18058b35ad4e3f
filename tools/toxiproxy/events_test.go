package main

// The link toxic's events and traces (events.go): the model with made-up times
// (exact figures), then moves on a live proxy.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

// linkLTE: one direction of lte (70 ms round trip), no rate, slow start on.
func linkLTE(events *linkEvents) linkConfig {
	return linkConfig{latency: 35 * time.Millisecond, rtt: 70 * time.Millisecond, handshake: 70 * time.Millisecond, iw: 14600, mss: 1460, rtoMin: 200 * time.Millisecond, events: events}
}

// A handover at 1 s for 1.5 s (the +handover default's length).
func handoverAt(epoch time.Time) *linkEvents {
	return &linkEvents{epoch: epoch, kind: eventBlackout, offset: time.Second, length: 1500 * time.Millisecond}
}

// The retransmission times as the issue states them, written out apart from
// events.go's loop: RTO from RTT + 200 ms (the connection's first round: RTT +
// max(2 RTT, 200 ms)), doubling; the bytes arrive with the first try that
// reaches the far end after the blackout.
func modelledArrival(sent time.Time, rto, latency time.Duration, lit time.Time) time.Time {
	for try := sent.Add(rto); ; try = try.Add(rto) {
		rto *= 2
		if !try.Add(latency).Before(lit) {
			return try.Add(latency)
		}
	}
}

// A blackout holds the bytes sent into it and lets them out at the modelled
// retransmission; bytes before it pass untouched, and so do bytes after it on a
// connection that sent nothing in the dark (an idle connection never notices).
func TestBlackoutHoldsBytesUntilTheBackedOffRetransmission(t *testing.T) {
	c := linkLTE(handoverAt(t0))
	lit := t0.Add(2500 * time.Millisecond)

	s := newTCPSender(t0, 1)
	before := sendAll(s, &c, t0.Add(500*time.Millisecond), payload(100, 1))
	if got, want := lastOut(before).Sub(t0), 535*time.Millisecond; !near(got, want) {
		t.Fatalf("before the blackout: let out at %v, want %v", got, want)
	}
	sent := t0.Add(1100 * time.Millisecond)
	dark := sendAll(s, &c, sent, payload(3000, 2))
	want := modelledArrival(sent, c.rto(s.samples), c.latency, lit)
	if got := lastOut(dark); !near(got.Sub(t0), want.Sub(t0)) {
		t.Fatalf("sent in the blackout at 1.1 s: let out at %v, want the retransmission's %v (link back at 2.5 s)", got.Sub(t0), want.Sub(t0))
	}
	if want.Sub(lit) <= 0 || want.Sub(lit) > 2*time.Second {
		t.Fatalf("the modelled arrival %v is not after the link's return at 2.5 s", want.Sub(t0))
	}
	t.Logf("sent at 1.1 s into a blackout 1-2.5 s: arrives at %v (%v after the link is back)", want.Sub(t0), want.Sub(lit))

	// In flight when the link goes dark: a segment that would arrive at 1.01 s.
	s = newTCPSender(t0, 3)
	sendAll(s, &c, t0.Add(100*time.Millisecond), payload(10, 3))
	late := sendAll(s, &c, t0.Add(975*time.Millisecond), payload(10, 4))
	if got := lastOut(late); got.Before(lit) {
		t.Fatalf("a segment in flight when the link went dark arrived at %v, in the blackout", got.Sub(t0))
	}

	// Idle through the blackout: the next bytes pay only the latency.
	s = newTCPSender(t0, 5)
	sendAll(s, &c, t0.Add(100*time.Millisecond), payload(10, 5))
	after := sendAll(s, &c, t0.Add(2600*time.Millisecond), payload(10, 6))
	if got, want := lastOut(after).Sub(t0), 2635*time.Millisecond; !near(got, want) {
		t.Fatalf("after the blackout on an idle connection: let out at %v, want %v", got, want)
	}
}

// Every blackout of a periodic schedule holds bytes; the window falls to one
// segment after it (a timeout), so a large message after the blackout takes
// more rounds than before it.
func TestBlackoutsRepeatAndCollapseTheWindow(t *testing.T) {
	ev := &linkEvents{epoch: t0, kind: eventBlackout, offset: time.Second, period: 10 * time.Second, length: 500 * time.Millisecond}
	c := linkLTE(ev)
	for i, at := range []time.Duration{1200 * time.Millisecond, 11200 * time.Millisecond, 21200 * time.Millisecond} {
		s := newTCPSender(t0, int64(i))
		got := lastOut(sendAll(s, &c, t0.Add(at), payload(10, int64(i))))
		if end := t0.Add(at - 200*time.Millisecond + 500*time.Millisecond); got.Before(end) {
			t.Fatalf("blackout %d: bytes sent in it arrived at %v, before it ended at %v", i, got.Sub(t0), end.Sub(t0))
		}
	}
	s := newTCPSender(t0, 9)
	sendAll(s, &c, t0.Add(100*time.Millisecond), payload(60000, 9)) // opens the window
	sendAll(s, &c, t0.Add(1100*time.Millisecond), payload(10, 10))  // lost in the blackout
	if s.cwnd <= int64(c.mss) {
		t.Fatalf("the window was %d before the cut", s.cwnd)
	}
	sendAll(s, &c, t0.Add(5*time.Second), payload(3000, 11))
	if s.cwnd > 4*int64(c.mss) {
		t.Fatalf("after a timeout in the blackout the window is %d bytes, want it restarted from one segment", s.cwnd)
	}
}

// A connection opened in the dark completes its handshake at the SYN's
// retransmission (1 s, then 2 s later) that meets a lit link.
func TestHandshakeInTheDarkWaitsForTheSYNRetransmission(t *testing.T) {
	c := linkLTE(handoverAt(t0))
	for _, k := range []struct{ opened, want time.Duration }{
		{500 * time.Millisecond, 500 * time.Millisecond},                         // before: no wait
		{950 * time.Millisecond, 950*time.Millisecond + 3*time.Second},           // round trip meets the dark: 1.95 s is dark, 3.95 s is not
		{1200 * time.Millisecond, 1200*time.Millisecond + 3*time.Second},         // 2.2 s dark, 4.2 s lit
		{2000 * time.Millisecond, 2000*time.Millisecond + time.Second},           // 3.0 s lit
		{2600 * time.Millisecond, 2600 * time.Millisecond},                       // after
		{2440 * time.Millisecond, 2440*time.Millisecond + time.Second},           // ends in the dark
		{100 * time.Millisecond, 100 * time.Millisecond},                         // long before
		{3000 * time.Millisecond, 3000 * time.Millisecond},                       // long after
		{900 * time.Millisecond, 900 * time.Millisecond},                         // its round trip ends at 0.97 s, before the dark
		{929 * time.Millisecond, 929 * time.Millisecond},                         // its round trip ends before the dark
		{1000 * time.Millisecond, 1000*time.Millisecond + 3*time.Second},         // 2.0 s still dark
		{2499 * time.Millisecond, 2499*time.Millisecond + 1000*time.Millisecond}, // 3.499 s lit
	} {
		if got := c.opensAt(t0.Add(k.opened)).Sub(t0); got != k.want+c.handshake {
			t.Errorf("opened at %v: may send at %v, want %v", k.opened, got, k.want+c.handshake)
		}
	}
}

// A dip lowers the rate while it lasts, and only then.
func TestDipLowersTheRateWhileItLasts(t *testing.T) {
	ev := &linkEvents{epoch: t0, kind: eventDip, offset: time.Second, length: 3 * time.Second, share: 0.1}
	c := linkConfig{latency: 10 * time.Millisecond, rtt: 20 * time.Millisecond, rate: 1e6 / 8, mss: 1460, rtoMin: 200 * time.Millisecond, events: ev}
	before := lastOut(sendAll(newTCPSender(t0, 1), &c, t0.Add(100*time.Millisecond), payload(12500, 1))).Sub(t0.Add(100 * time.Millisecond))
	in := lastOut(sendAll(newTCPSender(t0, 2), &c, t0.Add(1100*time.Millisecond), payload(12500, 2))).Sub(t0.Add(1100 * time.Millisecond))
	if !near(before, 110*time.Millisecond) {
		t.Fatalf("12500 bytes at 1 Mbit/s before the dip took %v, want 110 ms", before)
	}
	if !near(in, 1010*time.Millisecond) {
		t.Fatalf("12500 bytes in a dip to 10 %% took %v, want 1010 ms", in)
	}
}

// A trace delivers exactly at its opportunities, one segment each, in a FIFO,
// repeating every last-timestamp ms, from the epoch.
func TestTraceDeliversAtItsOpportunities(t *testing.T) {
	tr := newLinkTrace(t0, []int64{5, 5, 10, 20})
	c := linkConfig{mss: 1460, rtoMin: 200 * time.Millisecond, trace: tr}
	s := newTCPSender(t0, 1)
	p := sendAll(s, &c, t0, payload(6*1460, 1))
	want := []time.Duration{5, 5, 10, 20, 25, 25}
	for i, w := range want {
		if got := deliveredAt(p, (i+1)*1460).Sub(t0); got != w*time.Millisecond {
			t.Errorf("segment %d let out at %v, want %v ms", i+1, got, w)
		}
	}
	// A later send takes the next unused opportunity at or after it.
	if got := lastOut(sendAll(s, &c, t0.Add(41*time.Millisecond), payload(100, 2))).Sub(t0); got != 45*time.Millisecond {
		t.Errorf("a segment at 41 ms was let out at %v, want the opportunity at 45 ms", got)
	}
	// Before the epoch the trace runs backwards the same way.
	if got := tr.at(tr.first(t0.Add(-12 * time.Millisecond))).Sub(t0); got != -10*time.Millisecond {
		t.Errorf("the first opportunity from -12 ms is at %v, want -10 ms", got)
	}
	// The mean rate caps the window: 4 packets of 1500 bytes per 20 ms.
	if got := c.meanRate(); got != 300000 {
		t.Errorf("mean rate %v bytes/s, want 300000", got)
	}
	for _, bad := range [][]int64{nil, {0}, {5, 3}, {-1, 4}} {
		if newLinkTrace(t0, bad) != nil {
			t.Errorf("trace %v accepted", bad)
		}
	}
}

// The toxic's attributes reach the model: epoch and events, and the trace.
func TestLinkAttributesMakeTheSchedule(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond)
	lt := &LinkToxic{Latency: 10, RTT: 20, Epoch: now.UnixMilli(), Event: int64(eventMoveReset), EventOff: 100, EventPer: 1000, EventLen: 300, DipShare: 500000, Trace: []int64{1, 2}}
	c := lt.config()
	if c.events == nil || !c.events.isMove() || c.events.epoch != now || c.events.period != time.Second || c.events.share != 0.5 {
		t.Fatalf("events %+v", c.events)
	}
	if c.trace == nil || c.trace.period != 2*time.Millisecond {
		t.Fatalf("trace %+v", c.trace)
	}
	if got := c.events.deathAt(now.Add(50 * time.Millisecond)).Sub(now); got != 400*time.Millisecond {
		t.Fatalf("a connection opened at 50 ms dies at %v, want 400 ms", got)
	}
	if got := c.events.deathAt(now.Add(450 * time.Millisecond)).Sub(now); got != 1400*time.Millisecond {
		t.Fatalf("a connection opened at 450 ms dies at %v, want 1400 ms", got)
	}
	if (&LinkToxic{Event: 1, EventLen: 300}).config().events != nil {
		t.Fatal("events without an epoch")
	}
}

// moveProxy: a proxy whose link toxics (both ways) move at `after` for 200 ms.
func moveProxy(t *testing.T, kind eventKind, after time.Duration) string {
	epoch := time.Now().UnixMilli()
	attrs := fmt.Sprintf(`"latency":1,"rtt":2,"epoch":%d,"event":%d,"event_offset":%d,"event_length":200`, epoch, kind, after.Milliseconds())
	proxy := proxyWith(t,
		`{"name":"link_up","type":"link","stream":"upstream","attributes":{`+attrs+`}}`,
		`{"name":"link_down","type":"link","stream":"downstream","attributes":{`+attrs+`}}`,
	)
	return proxy.Listen
}

func echoOnce(conn net.Conn, d time.Duration) error {
	conn.SetDeadline(time.Now().Add(d))
	if _, err := conn.Write([]byte("ping")); err != nil {
		return err
	}
	_, err := io.ReadFull(conn, make([]byte, 4))
	return err
}

// +move: every connection open before the move's end is dead after it; a new
// one works. Silent: the old connection hears nothing (its read times out);
// announced: it is reset at the blackout's end.
func TestMoveKillsEveryConnection(t *testing.T) {
	for _, kind := range []eventKind{eventMoveSilent, eventMoveReset} {
		addr := moveProxy(t, kind, 300*time.Millisecond)
		old, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		if err := echoOnce(old, 2*time.Second); err != nil {
			t.Fatalf("kind %d: before the move: %v", kind, err)
		}
		idle, err := net.Dial("tcp", addr) // idle through the move: dead too
		if err != nil {
			t.Fatal(err)
		}
		defer idle.Close()
		time.Sleep(700 * time.Millisecond) // the move: 300-500 ms
		start := time.Now()
		oldErr := echoOnce(old, time.Second)
		err = oldErr
		took := time.Since(start)
		switch kind {
		case eventMoveSilent:
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("silent move: the old connection got %v after %v, want nothing until its timeout", err, took)
			}
		case eventMoveReset:
			// A FIN (an unpatched module, patch 0003) would give io.EOF.
			if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
				t.Fatalf("move with reset: the old connection got %v, want a reset", err)
			}
			if took > 500*time.Millisecond {
				t.Fatalf("move with reset: the error took %v", took)
			}
		}
		if err := echoOnce(idle, 500*time.Millisecond); err == nil {
			t.Fatalf("kind %d: a connection idle through the move still works", kind)
		}
		fresh, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := echoOnce(fresh, 2*time.Second); err != nil {
			t.Fatalf("kind %d: a connection opened after the move: %v", kind, err)
		}
		fresh.Close()
		t.Logf("kind %d: the old connection's exchange after the move: %v after %v", kind, oldErr, took)
	}
}

func webSocketClosesClient(data []byte) bool { c, _ := webSocketCloses(data); return c }

// On a silently dead connection a WebSocket's closing handshake passes (k6 could
// not end a VU otherwise); any other bytes vanish, and a close by one end is not
// heard by the other.
func TestSilentMoveLetsAWebSocketCloseGo(t *testing.T) {
	// The upstream: answers a client's close frame with its own and closes, as a
	// WebSocket server does; closes by itself after `quitAfter` otherwise.
	upstream := func(quitAfter time.Duration) string {
		return serveTCP(t, func(c net.Conn) {
			defer c.Close()
			c.SetDeadline(time.Now().Add(quitAfter))
			buf := make([]byte, 64)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				if client, _ := webSocketCloses(buf[:n]); client {
					c.Write([]byte{0x88, 0x02, 0x03, 0xe8}) //nolint:errcheck
					return
				}
			}
		})
	}
	proxyTo := func(up string) string {
		server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
		proxy := toxiproxy.NewProxy(server, "ws", "127.0.0.1:0", up)
		if err := proxy.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(proxy.Stop)
		attrs := fmt.Sprintf(`"latency":1,"rtt":2,"epoch":%d,"event":2,"event_offset":100,"event_length":200`, time.Now().UnixMilli())
		for _, stream := range []string{"upstream", "downstream"} {
			j := `{"name":"link_` + stream + `","type":"link","stream":"` + stream + `","attributes":{` + attrs + `}}`
			if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(j)); err != nil {
				t.Fatal(err)
			}
		}
		return proxy.Listen
	}

	// The closing handshake passes the dead connection.
	conn, err := net.Dial("tcp", proxyTo(upstream(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(400 * time.Millisecond) // the move: 100-300 ms
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	message := []byte{0x81, 0x82, 1, 2, 3, 4, 'h' ^ 1, 'i' ^ 2}
	if _, err := conn.Write(append(message, 0x88, 0x82, 1, 2, 3, 4, 0x03^1, 0xe8^2)); err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(conn)
	if err != nil || !bytes.Equal(back, []byte{0x88, 0x02, 0x03, 0xe8}) {
		t.Fatalf("after the client's close frame: % x, %v; want the server's close frame, then the end", back, err)
	}

	// A server that closes the dead connection: the client hears nothing.
	conn2, err := net.Dial("tcp", proxyTo(upstream(500*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	conn2.SetDeadline(time.Now().Add(1500 * time.Millisecond))
	var ne net.Error
	if _, err := conn2.Read(make([]byte, 8)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("the server closed the dead connection at 500 ms: the client got %v, want nothing (a timeout)", err)
	}

	text := []byte{0x81, 0x83, 9, 9, 9, 9, 'a', 'b', 'c'} // a client's text frame, 3 bytes
	for _, k := range []struct {
		data []byte
		want bool
	}{
		{[]byte{0x88, 0x80, 1, 2, 3, 4}, true},
		{append(append([]byte{}, text...), 0x88, 0x80, 1, 2, 3, 4), true}, // after a message
		{[]byte{0x88, 0x02, 3, 232}, false},                               // a server's (unmasked)
		{text, false},
		{[]byte("POST /graphql HTTP/1.1\r\n"), false},
		{append([]byte{0x81, 0xfe, 0x01, 0x00}, make([]byte, 4+256)...), false}, // 16-bit length
	} {
		if got := webSocketClosesClient(k.data); got != k.want {
			t.Errorf("webSocketCloses(% x...) = %v, want %v", k.data[:4], got, k.want)
		}
	}
}
