// toxiproxy-server v2.5.0 with one extra toxic, "handshake", compiled in.
//
// Stock Toxiproxy accepts the client's TCP connection at once and only then
// dials upstream, so a fresh connection through it pays no TCP handshake:
// a request on a new connection costs the same one RTT as on a kept-alive one.
// The handshake toxic holds the first upstream chunk of every connection for
// one RTT, which is what the SYN / SYN-ACK exchange costs on a real link.
// See ../../shared/NETWORK.md ("It does not delay connection set-up") and
// toxiproxy's CREATING_TOXICS.md for the build pattern used here.
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
		fmt.Printf("toxiproxy-server version %s (k6pack build, +handshake toxic)\n", toxiproxy.Version)
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
	logger := zerolog.New(os.Stdout).With().Timestamp().Logger().Level(level)

	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	if *config != "" {
		server.PopulateConfig(*config)
	}
	server.Listen(*host, *port)
}
