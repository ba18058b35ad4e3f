// Healthcheck for the toxiproxy image, which is FROM scratch (no shell, no
// curl or wget): GET each URL given and exit 0 only if all answer 200 in time.
//
//	/healthcheck http://127.0.0.1:8474/version
//
// Standard library only, built static next to toxiproxy-server in
// docker/toxiproxy.Dockerfile.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

const timeout = 2 * time.Second

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: healthcheck URL...")
		os.Exit(1)
	}
	client := &http.Client{Timeout: timeout}
	for _, url := range os.Args[1:] {
		res, err := client.Get(url)
		if err != nil {
			fmt.Fprintf(os.Stderr, "unhealthy: %v\n", err)
			os.Exit(1)
		}
		io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			fmt.Fprintf(os.Stderr, "unhealthy: %s answered %d\n", url, res.StatusCode)
			os.Exit(1)
		}
	}
	fmt.Println("healthy")
}
