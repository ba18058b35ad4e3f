package main

// The link toxic as toxiproxy runs it: on a ToxicStub between channels (the
// pattern of toxiproxy's toxics/*_test.go and handshake_test.go), and on a live
// proxy. Waits are checked against long delays with the slack of a busy
// machine; how precise the timer is, is printed, never asserted (it is a
// figure, bench/tcp.js measures it).

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
)

// Nothing leaves before `handshake`; then each chunk waits `latency`.
func TestLinkHoldsTheHandshakeThenAddsLatency(t *testing.T) {
	opened := time.Now() // before the state (the connection's start) is made
	p := newPipe(&LinkToxic{Handshake: hold.Milliseconds(), Latency: 100, RTT: 200})
	done := p.run()
	p.send("first")
	if c := recv(t, p.out); string(c.Data) != "first" {
		t.Fatalf("got %q", c.Data)
	}
	assertWait(t, "first chunk: handshake + latency", time.Since(opened), hold+100*time.Millisecond)
	start := time.Now()
	p.send("second")
	recv(t, p.out)
	assertWait(t, "later chunk: latency", time.Since(start), 100*time.Millisecond)
	p.close(t, done)
}

// A chunk never leaves early; how late it leaves is logged.
func TestLinkTimerIsNeverEarly(t *testing.T) {
	const latency = 4 * time.Millisecond
	p := newPipe(&LinkToxic{Latency: latency.Milliseconds(), RTT: 8})
	done := p.run()
	var late []time.Duration
	for i := 0; i < 100; i++ {
		start := time.Now()
		p.send("x")
		recv(t, p.out)
		took := time.Since(start)
		if took < latency {
			t.Fatalf("chunk %d out after %v, before its latency %v", i, took, latency)
		}
		late = append(late, took-latency)
		time.Sleep(time.Duration(rand.Intn(1500)) * time.Microsecond)
	}
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	t.Logf("4 ms latency, 100 chunks: late by %v (median), %v (90th), %v (max)", late[50], late[90], late[99])
	p.close(t, done)
}

// At the end of the input, bytes still held leave at their time, then the
// output closes.
func TestLinkEndOfStreamWaitsForHeldBytes(t *testing.T) {
	p := newPipe(&LinkToxic{Latency: hold.Milliseconds(), RTT: 2 * hold.Milliseconds()})
	done := p.run()
	start := time.Now()
	p.send("last words")
	close(p.in)
	if c := recv(t, p.out); string(c.Data) != "last words" {
		t.Fatalf("got %q", c.Data)
	}
	assertWait(t, "held chunk after the end of the input", time.Since(start), hold)
	select {
	case c, ok := <-p.out:
		if ok {
			t.Fatalf("unexpected chunk %q", c.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the output was not closed")
	}
	<-done
}

// Interrupts (a toxic added after this one, or this one's attributes updated:
// the run stops and starts again on the same state) and updates in the middle
// of a long lossy stream: every byte comes out, in order, once.
func TestLinkInterruptsAndUpdatesKeepEveryByte(t *testing.T) {
	toxic := &LinkToxic{Latency: 20, RTT: 40, Bitrate: 20e6, IW: 14600, Loss: 100000} // 10 % of segments lost
	p := newPipe(toxic)
	done := p.run()
	var sent bytes.Buffer
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range p.out {
			got.Write(c.Data)
		}
	}()
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 60; i++ {
		chunk := payload(1+rng.Intn(20000), int64(i))
		sent.Write(chunk)
		p.in <- &stream.StreamChunk{Data: chunk, Timestamp: time.Now()}
		if i%6 == 5 {
			if !p.stub.InterruptToxic() {
				t.Fatal("the stub was closed")
			}
			<-done
			toxic.Latency = int64(10 + rng.Intn(40)) // an update between runs, as UpdateToxicJson does
			done = p.run()
		}
		time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
	}
	close(p.in)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the toxic did not end after its input")
	}
	wg.Wait()
	if !bytes.Equal(got.Bytes(), sent.Bytes()) {
		t.Fatalf("%d bytes out for %d in, or changed", got.Len(), sent.Len())
	}
}

// Removing the toxic (interrupt, then Cleanup) lets everything it holds out at
// once, in order, before what is still in its input.
func TestLinkRemovalLetsHeldBytesOut(t *testing.T) {
	toxic := &LinkToxic{Latency: 10000, RTT: 20000, Bitrate: 8000, IW: 14600} // 1 KB/s, 10 s away
	p := newPipe(toxic)
	done := p.run()
	data := payload(50000, 1)
	p.in <- &stream.StreamChunk{Data: data, Timestamp: time.Now()}
	time.Sleep(50 * time.Millisecond) // taken into the toxic's state
	start := time.Now()
	var got bytes.Buffer
	out := make(chan struct{})
	go func() {
		defer close(out)
		for got.Len() < len(data) {
			c := recv(t, p.out)
			got.Write(c.Data)
		}
	}()
	if !p.stub.InterruptToxic() {
		t.Fatal("the stub was closed")
	}
	<-done
	toxic.Cleanup(p.stub)
	<-out
	assertWait(t, "held bytes after the removal", time.Since(start), 0)
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatal("the bytes came out changed")
	}
}

// echoPayload: the proxy under test, an echo upstream, and a helper that
// writes n bytes on a new connection and times how long they take to come back.
func proxyWith(t *testing.T, toxics ...string) *toxiproxy.Proxy {
	t.Helper()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "link", "127.0.0.1:0", echoServer(t))
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Stop)
	for _, j := range toxics {
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(j)); err != nil {
			t.Fatal(err)
		}
	}
	return proxy
}

func roundTrip(addr string, n int) (time.Duration, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	data := payload(n, int64(n))
	start := time.Now()
	go conn.Write(data) //nolint:errcheck
	back := make([]byte, n)
	if _, err := io.ReadFull(conn, back); err != nil {
		return 0, err
	}
	if !bytes.Equal(back, data) {
		return 0, fmt.Errorf("the echo differs")
	}
	return time.Since(start), nil
}

// With shared: 1 the connections of a proxy share its bandwidth: six at once
// each take six times as long as one alone; with shared: 0 each has its own.
func TestLinkSharedBandwidthSplitsItBetweenConnections(t *testing.T) {
	const n = 100000 // 0.1 s at 8 Mbit/s
	for _, k := range []struct {
		shared   int
		min, max time.Duration
	}{
		{0, 80 * time.Millisecond, 350 * time.Millisecond},
		{1, 450 * time.Millisecond, 2 * time.Second},
	} {
		proxy := proxyWith(t, fmt.Sprintf(`{"name":"link_downstream","type":"link","stream":"downstream","attributes":{"bitrate":8000000,"shared":%d}}`, k.shared))
		var wg sync.WaitGroup
		took := make([]time.Duration, 6)
		errs := make([]error, 6)
		for i := range took {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				took[i], errs[i] = roundTrip(proxy.Listen, n)
			}(i)
		}
		wg.Wait()
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		for i, err := range errs {
			if err != nil {
				t.Fatalf("shared %d, connection %d: %v", k.shared, i, err)
			}
		}
		t.Logf("shared %d: six connections of %d bytes at 8 Mbit/s took %v", k.shared, n, took)
		if last := took[5]; last < k.min || last > k.max {
			t.Errorf("shared %d: the last of six connections took %v, want %v to %v", k.shared, last, k.min, k.max)
		}
	}
}

// A live connection keeps its state when the toxic's attributes change (a
// profile switch 3g -> lte is an update in place): past its handshake, it pays
// only the new latency.
func TestLinkUpdateKeepsALiveConnection(t *testing.T) {
	proxy := proxyWith(t,
		fmt.Sprintf(`{"name":"link_upstream","type":"link","stream":"upstream","attributes":{"handshake":%d,"latency":50,"rtt":100}}`, hold.Milliseconds()),
		`{"name":"link_downstream","type":"link","stream":"downstream","attributes":{"latency":50,"rtt":100}}`)
	conn, err := net.Dial("tcp", proxy.Listen)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	timed := func(what string, want time.Duration) {
		t.Helper()
		start := time.Now()
		if err := exchange(conn, r, 5*time.Second); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		assertWait(t, what, time.Since(start), want)
	}
	timed("first exchange: handshake + round trip", hold+100*time.Millisecond)
	timed("second exchange: round trip", 100*time.Millisecond)
	for _, stream := range []string{"upstream", "downstream"} {
		if _, err := proxy.Toxics.UpdateToxicJson("link_"+stream, strings.NewReader(`{"attributes":{"latency":150,"rtt":300}}`)); err != nil {
			t.Fatal(err)
		}
	}
	timed("after the update: the new round trip, no handshake", 300*time.Millisecond)
}
