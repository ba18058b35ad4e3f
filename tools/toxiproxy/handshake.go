package main

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// HandshakeToxic makes a fresh connection pay for TCP's three-way handshake,
// which Toxiproxy itself skips: it accepts the client at once and dials the
// upstream at once, so without this toxic a new connection costs nothing.
//
// On a real link with round-trip time R, the client may send only after the
// SYN-ACK is back (R after connect), and the server learns the connection is
// open only when the client's ACK arrives (1.5 R); its first bytes reach the
// client at 2 R. The pack adds, ahead of the latency toxics:
//
//	upstream:   {"delay": R}        the client's first chunk waits R after it arrives
//	downstream: {"until": 1.5 R}    nothing from the server passes before the
//	                                connection is 1.5 R old (only server-first
//	                                protocols notice: an HTTP/2 server's SETTINGS,
//	                                which a gRPC client waits for before its first call)
//
// Both attributes may be combined; 0 (the default) turns either off. A held
// chunk leaves with its timestamp set to the moment it is let go, so a latency
// toxic after this one still adds its full delay instead of counting the hold
// as time already waited (the stock latency toxic waits "latency - time since
// the timestamp"). Later chunks queue behind a held one, so order is kept.
type HandshakeToxic struct {
	Delay int64 `json:"delay"`
	Until int64 `json:"until"`
}

// HandshakeState is per connection and direction. It is created when the link
// starts (the connection is accepted), or when the toxic is added to a live
// connection: such a connection is then treated as new.
type HandshakeState struct {
	opened time.Time
	first  bool // the first chunk has gone through
}

func (t *HandshakeToxic) NewState() interface{} {
	return &HandshakeState{opened: time.Now()}
}

// Buffer like the latency toxic, so holding a chunk never blocks the reader.
func (t *HandshakeToxic) GetBufferSize() int { return 1024 }

// hold is how long chunk c must still wait.
func (t *HandshakeToxic) hold(state *HandshakeState, c time.Time) time.Duration {
	var hold time.Duration
	if !state.first && t.Delay > 0 {
		// Measured from the chunk's timestamp, so it does not matter whether a
		// latency toxic before this one has already moved the timestamp on.
		hold = time.Duration(t.Delay)*time.Millisecond - time.Since(c)
	}
	if t.Until > 0 {
		if h := time.Until(state.opened.Add(time.Duration(t.Until) * time.Millisecond)); h > hold {
			hold = h
		}
	}
	return hold
}

func (t *HandshakeToxic) Pipe(stub *toxics.ToxicStub) {
	state := stub.State.(*HandshakeState)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if hold := t.hold(state, c.Timestamp); hold > 0 {
				select {
				case <-time.After(hold):
					c.Timestamp = time.Now()
				case <-stub.Interrupt:
					// Never drop data on an update: the held chunk goes now, and
					// counts as the first one (or the next run holds the chunk
					// after it a whole delay again).
					state.first = true
					stub.Output <- c
					return
				}
			}
			state.first = true
			stub.Output <- c
		}
	}
}
