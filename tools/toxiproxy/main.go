// toxiproxy-server v2.5.0 with the pack's own toxics compiled in, "link" and
// "handshake", and the pack's patches (patches/*.patch) applied to the vendored
// toxiproxy module.
//
// Stock Toxiproxy accepts the client's TCP connection at once and only then
// dials upstream, so a fresh connection through it pays no TCP handshake, and
// its bandwidth toxic sends at full rate from the first byte. The link toxic
// (link.go, one per direction) gives a network profile's connections what TCP
// does on a real link (tcp.go): the handshake's round trip, latency, the
// bandwidth, slow start, and loss repaired by retransmission, with the
// head-of-line blocking that comes with it; on a precise timer (clock.go). The
// handshake toxic (handshake.go) is the handshake alone, for chains of stock
// toxics. The build follows toxiproxy's CREATING_TOXICS.md: a main package that
// registers the toxics and runs the server.
//
// The patches make toxiproxy v2.5.0 survive profile changes (POST /reset, then
// new toxics) while connections open and close: unpatched it panics in
// ToxicLink.AddToxic, and with only that fixed it can deadlock. Each patch's
// header says what it changes and why; lib/tools.js applies them (`k6pack
// tools`), churn_test.go tests them.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

func init() {
	toxics.Register("link", new(LinkToxic))
	toxics.Register("handshake", new(HandshakeToxic))
}

func main() {
	host := flag.String("host", "127.0.0.1", "host for the API to listen on (keep it on loopback)")
	port := flag.String("port", "8474", "port for the API to listen on")
	config := flag.String("config", "", "JSON file of proxies (populate format) to create on start-up")
	seed := flag.Int64("seed", time.Now().UTC().UnixNano(), "seed for randomized toxics")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()

	if *version {
		fmt.Printf("toxiproxy-server version %s (k6pack build, +link and handshake toxics, patched for toxic changes under live traffic: tools/toxiproxy/patches)\n", toxiproxy.Version)
		return
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0)
	}()

	rand.Seed(*seed)
	level := zerolog.InfoLevel
	if lvl, err := zerolog.ParseLevel(os.Getenv("LOG_LEVEL")); err == nil && os.Getenv("LOG_LEVEL") != "" {
		level = lvl
	}
	// toxiproxy v2.5.0 also logs through zerolog's global logger (trace lines for
	// every connection and toxic change), which the level above does not reach.
	zerolog.SetGlobalLevel(level)
	logger := zerolog.New(os.Stdout).With().Timestamp().Logger().Level(level)

	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	if *config != "" {
		server.PopulateConfig(*config)
	}
	server.Listen(*host, *port)
}
