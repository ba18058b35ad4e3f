//go:build linux

package main

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The precise clock on Linux: one goroutine locked to its own OS thread keeps
// the deadlines (timerQueue) and sleeps until the earliest in ppoll(2) on the
// read end of a pipe; Reset writes a byte to the pipe when it brings the
// earliest deadline forward. ppoll takes a timespec (ns), unlike epoll_wait (ms).
var clock struct {
	once  sync.Once
	ok    bool
	q     timerQueue
	wakeR int
	wakeW int
}

const (
	prSetTimerslack = 29 // PR_SET_TIMERSLACK (linux/prctl.h): the thread's timer slack in ns (default 50 us)
	pollIn          = 0x1
)

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

func startClock() {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		os.Stderr.WriteString("toxiproxy-server: no precise clock (pipe: " + err.Error() + "); the link toxic uses Go timers, up to ~1 ms late\n")
		return
	}
	clock.wakeR, clock.wakeW = p[0], p[1]
	clock.ok = true
	go sleeper()
}

func (t *preciseTimer) Reset(at time.Time) {
	clock.once.Do(startClock)
	if !clock.ok {
		t.resetStd(at)
		return
	}
	if clock.q.schedule(t, at) {
		syscall.Write(clock.wakeW, []byte{0}) //nolint:errcheck // EAGAIN: the pipe already holds a wake-up
	}
}

func (t *preciseTimer) Stop() {
	clock.once.Do(startClock) // clock.ok is read only after the Once (a Stop before any Reset raced with it)
	if !clock.ok {
		t.stopStd()
		return
	}
	clock.q.unschedule(t)
}

func sleeper() {
	runtime.LockOSThread() // never unlocked: the thread is the clock's for the process's life
	syscall.Syscall(syscall.SYS_PRCTL, prSetTimerslack, 1000, 0)
	buf := make([]byte, 64)
	for {
		next := clock.q.fire(time.Now())
		var timeout *syscall.Timespec
		if !next.IsZero() {
			d := time.Until(next)
			if d <= 0 {
				continue
			}
			ts := syscall.NsecToTimespec(int64(d))
			timeout = &ts
		}
		fds := [1]pollFd{{fd: int32(clock.wakeR), events: pollIn}}
		// EINTR (the runtime's preemption signals) just goes round again.
		syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, uintptr(unsafe.Pointer(timeout)), 0, 0, 0)
		if fds[0].revents != 0 {
			for {
				if n, err := syscall.Read(clock.wakeR, buf); n <= 0 || err != nil {
					break
				}
			}
		}
	}
}
