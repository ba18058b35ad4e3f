//go:build !linux

package main

import "time"

// Without Linux's ppoll the link toxic's timer is a time.Timer (clock.go).
func (t *preciseTimer) Reset(at time.Time) { t.resetStd(at) }
func (t *preciseTimer) Stop()              { t.stopStd() }
