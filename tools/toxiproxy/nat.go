package main

// A carrier NAT's idle timeout (issue 41, `+nat=SECONDS`): a carrier-grade NAT
// or firewall forgets a TCP connection's mapping after it has carried nothing
// either way for a while, and says nothing: no FIN, no RST reaches either end.
// The next packet of either end finds no mapping and is dropped, so the client
// learns only from its own timeout when it next sends (or keeps waiting for a
// push that never comes).
//
//	nat_idle  the timeout in ms (0: none)
//
// The link toxic keeps one mapping per connection, shared by its two directions
// (natCell): any chunk either way refreshes it. A chunk that reaches the toxic
// more than nat_idle after the connection's last one (or its opening) finds the
// mapping gone: the connection dies as in a silent move (link.go die: what is
// held and everything after it is dropped, an end's close too, its sockets let
// go deadHold later), in both directions. TCP's own ACKs cross the NAT with the
// data they answer, so data one way keeps the mapping for both.
//
// Toxiproxy gives a toxic no handle on the other direction of its connection:
// patch 0004 gives each stub its connection's id (ToxicStub.ConnName), which
// keys the shared cell. On a module without it (the stock module `go test`
// builds against) each direction keeps its own cell: the timer then counts that
// direction's traffic alone.

import (
	"sync"
	"time"
)

// natCell: one connection's NAT mapping.
type natCell struct {
	mu   sync.Mutex
	last time.Time // the last chunk either way (or the connection's opening)
	dead bool
	refs int
}

// pass: a chunk reaches the NAT at t; false when the mapping had expired (the
// connection is dead from then on, for both directions).
func (c *natCell) pass(t time.Time, idle time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return false
	}
	if idle > 0 && t.Sub(c.last) > idle {
		c.dead = true
		return false
	}
	if t.After(c.last) {
		c.last = t
	}
	return true
}

func (c *natCell) isDead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// The cells of live connections, by connection id.
var natCells = struct {
	sync.Mutex
	m map[string]*natCell
}{m: map[string]*natCell{}}

// natCellFor: the connection's cell (a direction's own where the stub has no id).
func natCellFor(stub interface{}, opened time.Time) (*natCell, string) {
	named, ok := stub.(interface{ ConnName() string })
	if !ok || named.ConnName() == "" {
		return &natCell{last: opened}, ""
	}
	id := named.ConnName()
	natCells.Lock()
	defer natCells.Unlock()
	c := natCells.m[id]
	if c == nil {
		c = &natCell{last: opened}
		natCells.m[id] = c
	}
	c.refs++
	return c, id
}

// releaseNATCell: a direction of the connection has ended; the cell goes with the last.
func releaseNATCell(id string) {
	if id == "" {
		return
	}
	natCells.Lock()
	defer natCells.Unlock()
	if c := natCells.m[id]; c != nil {
		if c.refs--; c.refs <= 0 {
			delete(natCells.m, id)
		}
	}
}
