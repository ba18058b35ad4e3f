package main

// The carrier NAT's idle timeout (nat.go): the mapping with made-up times, then
// on a live proxy: an idle connection dies silently, a new one works, and
// (patch 0004) traffic either way keeps the connection's mapping for both.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// The mapping lives while the gaps stay within the timeout, and is gone for
// good after one longer gap.
func TestNATMappingExpiresAfterTheIdleTimeout(t *testing.T) {
	const idle = 60 * time.Second
	c := &natCell{last: t0}
	if !c.pass(t0.Add(idle), idle) {
		t.Fatal("a chunk exactly the timeout after the opening was dropped")
	}
	if !c.pass(t0.Add(idle+59*time.Second), idle) {
		t.Fatal("a chunk 59 s after the last one was dropped")
	}
	if c.pass(t0.Add(idle+59*time.Second+idle+time.Millisecond), idle) {
		t.Fatal("a chunk 60.001 s after the last one passed")
	}
	if c.pass(t0.Add(10*time.Minute), idle) || !c.isDead() {
		t.Fatal("a dead mapping came back")
	}
	if off := (&natCell{last: t0}); !off.pass(t0.Add(24*time.Hour), 0) {
		t.Fatal("nat_idle 0 dropped a connection")
	}
}

// natProxy: a proxy with the link toxic and nat_idle each way, in front of upstream.
func natProxy(t *testing.T, upstream string, idle time.Duration) string {
	t.Helper()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "nat", "127.0.0.1:0", upstream)
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Stop)
	attrs := fmt.Sprintf(`"latency":1,"rtt":2,"nat_idle":%d`, idle.Milliseconds())
	for _, j := range []string{
		`{"name":"link_up","type":"link","stream":"upstream","attributes":{` + attrs + `,"uplink":1}}`,
		`{"name":"link_down","type":"link","stream":"downstream","attributes":{` + attrs + `}}`,
	} {
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(j)); err != nil {
			t.Fatal(err)
		}
	}
	return proxy.Listen
}

// A connection idle longer than the timeout is dead: the client's next send
// gets no error and no answer (no FIN, no RST: its read times out); a
// connection that keeps talking within the timeout lives; a new one works.
func TestNATDropsAnIdleConnectionSilently(t *testing.T) {
	const idle = 300 * time.Millisecond
	addr := natProxy(t, echoServer(t), idle)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	quiet, busy := dial(), dial()
	for _, c := range []net.Conn{quiet, busy} {
		if err := echoOnce(c, 2*time.Second); err != nil {
			t.Fatalf("before any idle time: %v", err)
		}
	}
	for i := 0; i < 4; i++ { // 800 ms, never 300 ms quiet
		time.Sleep(idle / 2)
		if err := echoOnce(busy, 2*time.Second); err != nil {
			t.Fatalf("a connection that talks every %v died: %v", idle/2, err)
		}
	}
	start := time.Now()
	err := echoOnce(quiet, time.Second)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("after %v idle (timeout %v): got %v after %v, want no answer until the client's own timeout", 800*time.Millisecond, idle, err, time.Since(start))
	}
	if err := echoOnce(dial(), 2*time.Second); err != nil {
		t.Fatalf("a new connection after the NAT dropped the old one: %v", err)
	}
}

// pushServer: on each connection, writes "tick" every `every`, `n` times, and
// echoes what it reads.
func pushServer(t *testing.T, every time.Duration, n int) string {
	return serveTCP(t, func(conn net.Conn) {
		go func() {
			for i := 0; i < n; i++ {
				time.Sleep(every)
				if _, err := conn.Write([]byte("tick")); err != nil {
					return
				}
			}
		}()
		defer conn.Close()
		io.Copy(conn, conn)
	})
}

// The mapping is the connection's: a server that pushes keeps it alive for the
// client, which sends nothing for longer than the timeout and is still heard
// (patch 0004 pairs the directions; without it each has its own timer).
func TestNATPairsTheDirectionsOfAConnection(t *testing.T) {
	if _, ok := interface{}(toxics.NewToxicStub(nil, nil)).(interface{ ConnName() string }); !ok {
		t.Skip("the toxiproxy module lacks patch 0004 (each direction keeps its own NAT timer)")
	}
	const idle = 300 * time.Millisecond
	addr := natProxy(t, pushServer(t, idle/2, 6), idle)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, 6*4)); err != nil { // 900 ms of pushes, the client silent
		t.Fatalf("the pushes: %v", err)
	}
	if err := echoOnce(c, time.Second); err != nil {
		t.Fatalf("the client's first send after %v of pushes alone: %v, want its echo (the mapping is the connection's)", 900*time.Millisecond, err)
	}
}
