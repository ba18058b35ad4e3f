package main

// A timer that fires on time. The link toxic waits for one instant per chunk
// (its departure) and a round trip of the fios profile is 4 ms: Go's own timers
// are too coarse for that. When nothing is runnable, the Go runtime sleeps in
// epoll_wait, whose timeout is whole milliseconds (runtime/netpoll_epoll.go:
// a delay under 1 ms waits 1 ms, a longer one is cut to whole ms and the rest
// waits another 1 ms), so a time.Timer due in 0.3 ms fires after ~1.1 ms and one
// due in 2.3 ms after ~3.1 ms. Measured on the pack's 2-core machine (median
// lateness): 1.04 ms for a 50 us timer, 0.79 ms for 300 us, 0.72 ms for 1.5 ms,
// 0.85 ms for 2.3 ms; ~0.1 ms only when the delay happens to be whole ms. Each
// timer-based toxic in a chain (handshake, latency, bandwidth, each direction)
// paid that once per chunk, which is what made a fios round trip cost 2-3 ms more
// than its 4 ms.
//
// preciseTimer keeps the same interface as a time.Timer (Reset, Stop, C), but
// on Linux its deadlines are kept by one OS thread of its own that sleeps in
// ppoll(2) with a nanosecond timeout and a timer slack of 1 us
// (prctl(PR_SET_TIMERSLACK)), and is woken through a pipe when an earlier
// deadline arrives (clock_linux.go). Measured the same way: 40-85 us late
// (median) whatever the delay. Elsewhere it is a time.Timer (clock_other.go).

import (
	"container/heap"
	"sync"
	"time"
)

// preciseTimer fires once per Reset: a value is sent on C (buffered, so a
// firing never blocks the clock) at or after the deadline.
type preciseTimer struct {
	C     chan time.Time
	at    time.Time
	index int         // in the clock's heap; -1 when not scheduled
	std   *time.Timer // where there is no precise clock
}

func newPreciseTimer() *preciseTimer {
	return &preciseTimer{C: make(chan time.Time, 1), index: -1}
}

// timerHeap orders the scheduled timers by deadline.
type timerHeap []*preciseTimer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x interface{}) {
	t := x.(*preciseTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() interface{} {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// timerQueue is the clock's state, shared by the platform implementations.
type timerQueue struct {
	mu     sync.Mutex
	timers timerHeap
}

// schedule (re)arms t for at; it reports whether t is now the earliest deadline
// (the clock's sleeper must then wake up to shorten its sleep).
func (q *timerQueue) schedule(t *preciseTimer, at time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	// A value from an earlier deadline that nobody read is stale now.
	select {
	case <-t.C:
	default:
	}
	t.at = at
	if t.index >= 0 {
		heap.Fix(&q.timers, t.index)
	} else {
		heap.Push(&q.timers, t)
	}
	return q.timers[0] == t
}

func (q *timerQueue) unschedule(t *preciseTimer) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t.index >= 0 {
		heap.Remove(&q.timers, t.index)
	}
	select {
	case <-t.C:
	default:
	}
}

// fire sends on every timer due at now and returns the next deadline (zero if none).
func (q *timerQueue) fire(now time.Time) time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.timers) > 0 && !q.timers[0].at.After(now) {
		t := heap.Pop(&q.timers).(*preciseTimer)
		select {
		case t.C <- now:
		default:
		}
	}
	if len(q.timers) == 0 {
		return time.Time{}
	}
	return q.timers[0].at
}

// resetStd and stopStd are the timer where the precise clock is not available:
// a time.Timer that sends on C the same way.
func (t *preciseTimer) resetStd(at time.Time) {
	t.stopStd()
	t.std = time.AfterFunc(time.Until(at), func() {
		select {
		case t.C <- time.Now():
		default:
		}
	})
}

func (t *preciseTimer) stopStd() {
	if t.std != nil {
		t.std.Stop()
		t.std = nil
	}
	select {
	case <-t.C:
	default:
	}
}
