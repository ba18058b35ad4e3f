package main

// Regression test for patches/0001: profile changes (ResetToxics, then
// AddToxicJson for the next profile's toxics) while connections open and close
// on the proxy. Unpatched, toxiproxy v2.5.0 leaves a closed stub in a closing
// link's stubs, so the link no longer matches the chain and the next AddToxic
// panics ("index out of range") and takes the server down.

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Toxic sets switched between, as the profiles do: the link toxics of every
// network profile (and the handshake and latency toxics of earlier builds),
// plus toxics that close a stub themselves (reset_peer, limit_data) or on
// removal (timeout's Cleanup), which is what leaves a link half-closed while it
// is still in the collection.
var churnProfiles = [][]string{
	{
		`{"name":"hs_up","type":"handshake","stream":"upstream","attributes":{"delay":2}}`,
		`{"name":"hs_down","type":"handshake","stream":"downstream","attributes":{"until":3}}`,
		`{"name":"lat_up","type":"latency","stream":"upstream","attributes":{"latency":1}}`,
		`{"name":"lat_down","type":"latency","stream":"downstream","attributes":{"latency":1}}`,
	},
	{
		`{"name":"hs_up","type":"handshake","stream":"upstream","attributes":{"delay":1}}`,
		`{"name":"lat_down","type":"latency","stream":"downstream","attributes":{"latency":1}}`,
		`{"name":"bw_down","type":"bandwidth","stream":"downstream","attributes":{"rate":100000}}`,
		`{"name":"reset","type":"reset_peer","stream":"downstream","toxicity":0.3,"attributes":{"timeout":0}}`,
	},
	{
		`{"name":"hs_up","type":"handshake","stream":"upstream","attributes":{"delay":1}}`,
		`{"name":"stall","type":"timeout","stream":"upstream","toxicity":0.2,"attributes":{"timeout":0}}`,
		`{"name":"lat_up","type":"latency","stream":"upstream","attributes":{"latency":1}}`,
	},
	{
		`{"name":"lat_up","type":"latency","stream":"upstream","attributes":{"latency":1}}`,
		`{"name":"cut","type":"limit_data","stream":"downstream","toxicity":0.5,"attributes":{"bytes":40}}`,
		`{"name":"lat_down","type":"latency","stream":"downstream","attributes":{"latency":1}}`,
	},
	{
		// A network profile's link toxics (state per connection, released on removal by Cleanup).
		`{"name":"link_up","type":"link","stream":"upstream","attributes":{"handshake":2,"latency":1,"rtt":2,"bitrate":8000000,"iw":14600,"loss":10000}}`,
		`{"name":"link_down","type":"link","stream":"downstream","attributes":{"handshake":3,"latency":1,"rtt":2,"bitrate":8000000,"iw":14600,"loss":10000,"shared":1}}`,
		`{"name":"reset","type":"reset_peer","stream":"downstream","toxicity":0.3,"attributes":{"timeout":0}}`,
	},
	{
		// Events (events.go): moves that reset every 50 ms, a trace downstream.
		`{"name":"link_up","type":"link","stream":"upstream","attributes":{"latency":1,"rtt":2,"epoch":1,"event":3,"event_period":50,"event_length":5}}`,
		`{"name":"link_down","type":"link","stream":"downstream","attributes":{"latency":1,"rtt":2,"epoch":1,"event":3,"event_period":50,"event_length":5,"trace":[1,1,2,3]}}`,
	},
	{
		// Silent moves upstream, dips downstream.
		`{"name":"link_up","type":"link","stream":"upstream","attributes":{"latency":1,"rtt":2,"epoch":1,"event":2,"event_period":40,"event_length":5}}`,
		`{"name":"link_down","type":"link","stream":"downstream","attributes":{"latency":1,"rtt":2,"epoch":1,"event":4,"event_period":30,"event_length":10,"dip_share":100000,"bitrate":8000000}}`,
	},
	{}, // lan: no toxics
}

const (
	churnDuration = 3 * time.Second
	churnSwitches = 3000                   // bound on the switches, whatever the machine's speed
	switchPause   = 500 * time.Microsecond // lets connections open and close between switches
	churnClients  = 12
	switchTimeout = 10 * time.Second // one switch taking longer is a hang
)

func TestProfileChangesUnderConnectionChurn(t *testing.T) {
	upstream := echoServer(t)
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "churn", "127.0.0.1:0", upstream)
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	// Nothing that takes the collection's lock is deferred: after a hang it
	// would block the test binary instead of letting it report the failure.
	stop := make(chan struct{})
	var stopOnce sync.Once
	stopClients := func() { stopOnce.Do(func() { close(stop) }) }
	t.Cleanup(stopClients)
	var exchanges atomic.Int64
	var clients sync.WaitGroup
	for i := 0; i < churnClients; i++ {
		clients.Add(1)
		// Even clients close after each exchange (connection churn); odd ones keep
		// their connection until a toxic closes it, then dial again.
		go func(keep bool) {
			defer clients.Done()
			churnClient(proxy.Listen, keep, stop, &exchanges)
		}(i%2 == 1)
	}

	ctx := context.Background()
	switches, links := 0, 0
	deadline := time.Now().Add(churnDuration)
	for ; switches < churnSwitches && time.Now().Before(deadline); switches++ {
		time.Sleep(switchPause)
		links += linkCount(proxy.Toxics)
		profile := churnProfiles[switches%len(churnProfiles)]
		within(t, switchTimeout, "ResetToxics + AddToxicJson", func() {
			proxy.Toxics.ResetToxics(ctx)
			for _, toxic := range profile {
				if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
					t.Errorf("AddToxicJson(%s): %v", toxic, err)
				}
			}
		})
	}
	// Check while connections are still open and closing.
	assertLinksMatchChain(t, proxy.Toxics)
	stopClients()
	within(t, switchTimeout, "stopping the clients", clients.Wait)
	t.Logf("%d profile switches over %d links (%.1f a switch), %d exchanges", switches, links, float64(links)/float64(switches), exchanges.Load())
	if switches < 100 || links < 2*switches || exchanges.Load() < 100 {
		t.Fatalf("%d switches over %d links, %d exchanges: too little churn to exercise the switch", switches, links, exchanges.Load())
	}

	// The proxy still carries data once the churn is over.
	within(t, switchTimeout, "final switch", func() {
		proxy.Toxics.ResetToxics(ctx)
		for _, toxic := range churnProfiles[0] {
			if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
				t.Errorf("AddToxicJson(%s): %v", toxic, err)
			}
		}
	})
	conn, err := net.Dial("tcp", proxy.Listen)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := exchange(conn, bufio.NewReader(conn), time.Second); err != nil {
		t.Fatalf("echo through the proxy after the churn: %v", err)
	}
	assertLinksMatchChain(t, proxy.Toxics)
	within(t, switchTimeout, "proxy.Stop", proxy.Stop)
}

// within runs f and fails the test (with the goroutines' stacks) if it takes longer than d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s hung for %v:\n%s", what, d, buf[:runtime.Stack(buf, true)])
	}
}

// assertLinksMatchChain checks the invariant the patch restores: every link in
// the collection has one stub per toxic in its direction's chain, and on a link
// whose stubs are all open each stub's output is the next stub's input. The
// fields are unexported, so they are read by reflection under the collection's lock.
func assertLinksMatchChain(t *testing.T, c *toxiproxy.ToxicCollection) {
	t.Helper()
	c.Lock()
	defer c.Unlock()
	v := reflect.ValueOf(c).Elem()
	chain := v.FieldByName("chain")
	links := v.FieldByName("links")
	checked := 0
	for it := links.MapRange(); it.Next(); {
		link := it.Value().Elem()
		dir := int(link.FieldByName("direction").Uint())
		stubs := *(*[]*toxics.ToxicStub)(unsafe.Pointer(link.FieldByName("stubs").UnsafeAddr()))
		if want := chain.Index(dir).Len(); len(stubs) != want {
			t.Errorf("link %s: %d stubs for a chain of %d toxics", it.Key(), len(stubs), want)
			continue
		}
		checked++
		open := true
		for _, stub := range stubs {
			open = open && !stub.Closed()
		}
		for i := 0; open && i+1 < len(stubs); i++ {
			if reflect.ValueOf(stubs[i].Output).Pointer() != reflect.ValueOf(stubs[i+1].Input).Pointer() {
				t.Errorf("link %s: stub %d's output is not stub %d's input", it.Key(), i, i+1)
			}
		}
	}
	t.Logf("%d links match the chain", checked)
}

func linkCount(c *toxiproxy.ToxicCollection) int {
	c.Lock()
	defer c.Unlock()
	return reflect.ValueOf(c).Elem().FieldByName("links").Len()
}

// serveTCP listens on a free loopback port and runs handle on each connection it
// accepts, each in its own goroutine; it stops with the test. Returns the address.
func serveTCP(t *testing.T, handle func(conn net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(conn)
		}
	}()
	return ln.Addr().String()
}

// echoServer echoes every connection until it closes; stops with the test.
func echoServer(t *testing.T) string {
	return serveTCP(t, func(conn net.Conn) {
		defer conn.Close()
		io.Copy(conn, conn)
	})
}

// churnClient dials the proxy and exchanges lines until stop; it closes the
// connection after each exchange unless keep, and redials whenever a toxic
// has cut or stalled it. Every wait is bounded.
func churnClient(addr string, keep bool, stop <-chan struct{}, exchanges *atomic.Int64) {
	var conn net.Conn
	var r *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for {
		select {
		case <-stop:
			return
		default:
		}
		if conn == nil {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			conn, r = c, bufio.NewReader(c)
		}
		err := exchange(conn, r, 200*time.Millisecond)
		if err == nil {
			exchanges.Add(1)
		}
		if err != nil || !keep {
			conn.Close()
			conn = nil
		}
	}
}

var errEcho = errors.New("echo differs")

// exchange writes one line and reads it back within d.
func exchange(conn net.Conn, r *bufio.Reader, d time.Duration) error {
	const line = "the quick brown fox jumps over the lazy dog\n"
	conn.SetDeadline(time.Now().Add(d))
	if _, err := io.WriteString(conn, line); err != nil {
		return err
	}
	got, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if got != line {
		return errEcho
	}
	return nil
}
