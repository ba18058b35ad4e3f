package main

import (
	"os"
	"testing"

	"github.com/rs/zerolog"
)

// Some stock toxics (bandwidth) log through zerolog's global logger at trace
// level; keep the test output to what matters.
func TestMain(m *testing.M) {
	zerolog.SetGlobalLevel(zerolog.WarnLevel)
	os.Exit(m.Run())
}
