package main

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// HandshakeToxic delays the first chunk a connection sends in its stream by
// Delay milliseconds (set it to the profile's RTT on the upstream stream).
// Later chunks queue behind the first, so ordering is kept.
type HandshakeToxic struct {
	Delay int64 `json:"delay"`
}

// HandshakeState is per connection: whether the first chunk has gone through.
type HandshakeState struct {
	done bool
}

func (t *HandshakeToxic) NewState() interface{} { return new(HandshakeState) }

// Buffer like the latency toxic, so holding the first chunk never blocks the reader.
func (t *HandshakeToxic) GetBufferSize() int { return 1024 }

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
			if !state.done {
				state.done = true
				// Measured from the chunk's arrival, and the timestamp moves on by
				// the hold, so a latency toxic after this one adds its full delay
				// instead of counting the hold as time already waited.
				hold := time.Duration(t.Delay)*time.Millisecond - time.Since(c.Timestamp)
				if hold > 0 {
					select {
					case <-time.After(hold):
						c.Timestamp = c.Timestamp.Add(hold)
					case <-stub.Interrupt:
						stub.Output <- c // never drop data on an update
						return
					}
				}
			}
			stub.Output <- c
		}
	}
}
