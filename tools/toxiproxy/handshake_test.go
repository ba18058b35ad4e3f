package main

// The handshake toxic, driven as toxiproxy's own toxics/*_test.go drive theirs:
// a toxics.ToxicStub between two channels, chunks in, chunks out, timed. Holds
// are long next to a busy machine's scheduling noise, and a chunk is never
// early: the toxic waits on timers, which do not fire early.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

const (
	hold  = 300 * time.Millisecond // the delay / until the tests set
	slack = 120 * time.Millisecond // how late a chunk may be on a busy machine
)

// pipe runs toxic on a stub between in (buffered like a link's) and out.
type pipe struct {
	in      chan *stream.StreamChunk
	out     chan *stream.StreamChunk
	stub    *toxics.ToxicStub
	wrapper *toxics.ToxicWrapper
}

func newPipe(toxic toxics.Toxic) *pipe {
	return newPipeBetween(toxic, make(chan *stream.StreamChunk, 1024), make(chan *stream.StreamChunk))
}

func newPipeBetween(toxic toxics.Toxic, in, out chan *stream.StreamChunk) *pipe {
	p := &pipe{in: in, out: out}
	p.stub = toxics.NewToxicStub(p.in, p.out)
	if stateful, ok := toxic.(toxics.StatefulToxic); ok {
		p.stub.State = stateful.NewState() // as ToxicLink does when the connection starts
	}
	p.wrapper = &toxics.ToxicWrapper{Toxic: toxic, Toxicity: 1}
	return p
}

// run starts the toxic; the returned channel closes when its Pipe returns.
func (p *pipe) run() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.stub.Run(p.wrapper)
	}()
	return done
}

func (p *pipe) send(data string) {
	p.in <- &stream.StreamChunk{Data: []byte(data), Timestamp: time.Now()}
}

// recv waits (at most 5 s) for the next chunk.
func recv(t *testing.T, out <-chan *stream.StreamChunk) *stream.StreamChunk {
	t.Helper()
	select {
	case c := <-out:
		if c == nil {
			t.Fatal("the toxic closed its output")
		}
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no chunk came out within 5 s")
	}
	return nil
}

// assertWait checks that got lies in [want, want+slack].
func assertWait(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if got < want || got > want+slack {
		t.Errorf("%s: waited %v, want %v (up to %v late)", what, got.Round(time.Millisecond), want, slack)
	} else {
		t.Logf("%s: waited %v (want %v)", what, got.Round(time.Millisecond), want)
	}
}

// close ends the stream as a link does and checks the toxic closes its output.
func (p *pipe) close(t *testing.T, done <-chan struct{}) {
	t.Helper()
	close(p.in)
	for {
		select {
		case c, ok := <-p.out:
			if !ok {
				<-done
				return
			}
			t.Errorf("unexpected chunk %q after the end of the stream", c.Data)
		case <-time.After(5 * time.Second):
			t.Fatal("the toxic did not close its output at the end of the stream")
		}
	}
}

func TestHandshakeDelayHoldsOnlyTheFirstChunk(t *testing.T) {
	p := newPipe(&HandshakeToxic{Delay: hold.Milliseconds()})
	done := p.run()
	start := time.Now()
	p.send("first")
	p.send("second") // queued behind the held one
	c := recv(t, p.out)
	assertWait(t, "first chunk", time.Since(start), hold)
	if string(c.Data) != "first" {
		t.Fatalf("got %q first", c.Data)
	}
	start = time.Now()
	if c := recv(t, p.out); string(c.Data) != "second" {
		t.Fatalf("got %q second", c.Data)
	}
	assertWait(t, "queued second chunk", time.Since(start), 0)
	start = time.Now()
	p.send("later")
	if c := recv(t, p.out); string(c.Data) != "later" {
		t.Fatalf("got %q", c.Data)
	}
	assertWait(t, "later chunk", time.Since(start), 0)
	p.close(t, done)
}

func TestHandshakeUntilHoldsServerBytesUntilTheConnectionIsThatOld(t *testing.T) {
	opened := time.Now()
	p := newPipe(&HandshakeToxic{Until: hold.Milliseconds()}) // the state's clock starts here
	done := p.run()
	time.Sleep(hold / 3)
	p.send("settings") // the server speaks first, a third of the way in
	recv(t, p.out)
	assertWait(t, "server-first chunk, counted from the connection's start", time.Since(opened), hold)
	start := time.Now()
	p.send("response")
	recv(t, p.out)
	assertWait(t, "chunk once the connection is old enough", time.Since(start), 0)
	p.close(t, done)

	// A connection already older than `until` is not held at all.
	p = newPipe(&HandshakeToxic{Until: hold.Milliseconds()})
	time.Sleep(hold + 10*time.Millisecond)
	done = p.run()
	start = time.Now()
	p.send("late first chunk")
	recv(t, p.out)
	assertWait(t, "first chunk of an old connection", time.Since(start), 0)
	p.close(t, done)
}

// A held chunk leaves with its timestamp set to its release, so a latency toxic
// after the handshake adds its full latency; one before it moves the timestamp
// itself, so the order of the two does not matter.
func TestHandshakeThenLatencyAddsBothDelays(t *testing.T) {
	const latency = 200 * time.Millisecond
	for _, order := range []string{"handshake,latency", "latency,handshake"} {
		t.Run(order, func(t *testing.T) {
			hs := &HandshakeToxic{Delay: hold.Milliseconds()}
			lat := &toxics.LatencyToxic{Latency: latency.Milliseconds()}
			first, second := toxics.Toxic(hs), toxics.Toxic(lat)
			if strings.HasPrefix(order, "latency") {
				first, second = lat, hs
			}
			a := newPipe(first)
			b := newPipeBetween(second, make(chan *stream.StreamChunk, 1024), make(chan *stream.StreamChunk))
			a.stub.Output = b.in // a's output is b's input, as in a link
			doneA, doneB := a.run(), b.run()
			start := time.Now()
			a.send("request")
			c := recv(t, b.out)
			assertWait(t, "first chunk through both", time.Since(start), hold+latency)
			if order == "handshake,latency" && time.Since(c.Timestamp) > latency+slack {
				t.Errorf("the chunk left the handshake toxic with its arrival time, not its release time")
			}
			close(a.in)
			<-doneA
			<-doneB
		})
	}
}

// Interrupting the toxic (a toxic added, updated or removed on the proxy)
// while it holds a chunk lets that chunk out at once, as the connection's first;
// chunks queued behind it stay in the input for the toxic's next run and are not
// held again. No byte is lost, order is kept.
func TestHandshakeInterruptNeverDropsAChunk(t *testing.T) {
	p := newPipe(&HandshakeToxic{Delay: (2 * hold).Milliseconds()})
	done := p.run()
	var sent bytes.Buffer
	for i := 0; i < 5; i++ {
		chunk := fmt.Sprintf("chunk %d;", i)
		sent.WriteString(chunk)
		p.send(chunk)
	}
	time.Sleep(hold / 3) // the first chunk is being held
	interrupted := make(chan bool)
	start := time.Now()
	go func() { interrupted <- p.stub.InterruptToxic() }()
	var got bytes.Buffer
	got.Write(recv(t, p.out).Data)
	assertWait(t, "held chunk after the interrupt", time.Since(start), 0)
	if !<-interrupted {
		t.Fatal("InterruptToxic reported the stub closed")
	}
	<-done
	// Run again, as UpdateToxic or AddToxic does. The chunk let out counts as the
	// connection's first: the ones queued behind it are not held again.
	start = time.Now()
	done = p.run()
	for got.Len() < sent.Len() {
		got.Write(recv(t, p.out).Data)
	}
	assertWait(t, "chunks queued behind the one let out", time.Since(start), 0)
	if got.String() != sent.String() {
		t.Fatalf("got %q, sent %q", got.String(), sent.String())
	}
	p.close(t, done)
}

// handshake.go: when the toxic is added to a live connection, that connection
// is treated as new: its next upstream chunk is held `delay`, and nothing from
// the server passes before `until` has elapsed since the toxic was added.
func TestHandshakeAddedToALiveConnection(t *testing.T) {
	upstream := echoServer(t)
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "live", "127.0.0.1:0", upstream)
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	defer proxy.Stop()
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
	timed("exchange before the toxic", 0)

	add := func(json string) time.Time {
		t.Helper()
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(json)); err != nil {
			t.Fatal(err)
		}
		return time.Now()
	}
	add(fmt.Sprintf(`{"name":"hs_up","type":"handshake","stream":"upstream","attributes":{"delay":%d}}`, hold.Milliseconds()))
	timed("first exchange after adding delay", hold)
	timed("second exchange after adding delay", 0)

	added := add(fmt.Sprintf(`{"name":"hs_down","type":"handshake","stream":"downstream","attributes":{"until":%d}}`, hold.Milliseconds()))
	if err := exchange(conn, r, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	assertWait(t, "exchange right after adding until, from the add", time.Since(added), hold)
	timed("exchange once the toxic is older than until", 0)

	// Nothing lost: a larger write comes back whole.
	payload := strings.Repeat("0123456789", 10000) + "\n"
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, payload); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadString('\n')
	if err != nil || got != payload {
		t.Fatalf("echo of %d bytes: got %d bytes, %v", len(payload), len(got), err)
	}
}
