package main

// radio_log (radio_log.go): the radio's event log as Toxiproxy's own API lists a
// proxy's toxics, on a live proxy: the uplink toxic carries it, the downlink
// one does not, the promotion and the tail read back with their parameters'
// timing, and an update that sends radio_log back is accepted and changes nothing.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
)

type listedToxic struct {
	Name       string `json:"name"`
	Stream     string `json:"stream"`
	Attributes struct {
		Radio    int64 `json:"radio"`
		RadioLog *struct {
			Radio   string          `json:"radio"`
			Device  int64           `json:"device"`
			Now     float64         `json:"now"`
			Dropped int             `json:"dropped"`
			Events  [][]interface{} `json:"events"`
		} `json:"radio_log"`
	} `json:"attributes"`
}

// toxicIndex: GET /proxies/<name>/toxics, through the API's own handler.
func toxicIndex(t *testing.T, server *toxiproxy.ApiServer, name string) []listedToxic {
	t.Helper()
	req := mux.SetURLVars(httptest.NewRequest(http.MethodGet, "/proxies/"+name+"/toxics", nil), map[string]string{"proxy": name})
	rec := httptest.NewRecorder()
	server.ToxicIndex(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET toxics: %d %s", rec.Code, rec.Body.String())
	}
	var out []listedToxic
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("GET toxics: %v in %s", err, rec.Body.String())
	}
	return out
}

func TestRadioLogIsListedWithTheToxics(t *testing.T) {
	device := freshDevice()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "radio", "127.0.0.1:0", echoServer(t))
	if err := server.Collection.Add(proxy, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Stop)
	for _, j := range []string{
		fmt.Sprintf(`{"name":"up","type":"link","stream":"upstream","attributes":{"radio":1,"radio_device":%d,"uplink":1}}`, device),
		fmt.Sprintf(`{"name":"down","type":"link","stream":"downstream","attributes":{"radio":1,"radio_device":%d}}`, device),
	} {
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(j)); err != nil {
			t.Fatal(err)
		}
	}
	// Before any packet: the uplink toxic lists an empty log, the downlink none.
	for _, x := range toxicIndex(t, server, "radio") {
		if x.Stream == "downstream" && x.Attributes.RadioLog != nil {
			t.Fatalf("the downlink toxic lists a radio_log: %+v", x.Attributes.RadioLog)
		}
		if x.Stream == "upstream" && (x.Attributes.RadioLog == nil || len(x.Attributes.RadioLog.Events) != 0 || x.Attributes.RadioLog.Radio != "lte") {
			t.Fatalf("before any packet the uplink toxic lists %+v, want an empty lte log", x.Attributes.RadioLog)
		}
	}

	start := time.Now()
	conn, err := net.Dial("tcp", proxy.Listen)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := conn.Read(buf); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * tailQuiet) // the tail of the last packet is logged once the radio is quiet past tailQuiet

	var log *struct {
		Radio   string          `json:"radio"`
		Device  int64           `json:"device"`
		Now     float64         `json:"now"`
		Dropped int             `json:"dropped"`
		Events  [][]interface{} `json:"events"`
	}
	for _, x := range toxicIndex(t, server, "radio") {
		if x.Stream == "upstream" {
			log = x.Attributes.RadioLog
		}
	}
	if log == nil || log.Radio != "lte" || log.Device != device || log.Dropped != 0 {
		t.Fatalf("radio_log: %+v", log)
	}
	if now := float64(time.Now().UnixMicro()) / 1000; log.Now > now || log.Now < now-1000 {
		t.Fatalf("radio_log's now %v is not the server's clock (%v)", log.Now, now)
	}
	kinds := []string{}
	for _, e := range log.Events {
		kinds = append(kinds, e[1].(string))
	}
	if got := strings.Join(kinds, " "); got != "promotion-start promotion-end tail-start" {
		t.Fatalf("events %v, want promotion-start promotion-end tail-start", log.Events)
	}
	promoted := log.Events[1][0].(float64) - log.Events[0][0].(float64)
	if promoted != float64(lteParams.promotion.Milliseconds()) {
		t.Fatalf("the log's promotion lasts %v ms, want %v", promoted, lteParams.promotion)
	}
	if at := log.Events[0][0].(float64) - float64(start.UnixMicro())/1000; at < 0 || at > 50 {
		t.Fatalf("the promotion started %v ms after the connection was opened, want at once", at)
	}
	if e := log.Events[1]; e[2] != stateIdle || e[3] != stateConnected {
		t.Fatalf("promotion-end %v, want idle > connected", e)
	}

	// An update that sends the listed attributes back (radio_log among them) is accepted.
	body := fmt.Sprintf(`{"attributes":{"radio":1,"radio_device":%d,"uplink":1,"radio_log":{"events":[[1,"x","y","z"]]}}}`, device)
	if _, err := proxy.Toxics.UpdateToxicJson("up", strings.NewReader(body)); err != nil {
		t.Fatalf("an update with radio_log: %v", err)
	}
	for _, x := range toxicIndex(t, server, "radio") {
		if x.Stream == "upstream" && (x.Attributes.RadioLog == nil || len(x.Attributes.RadioLog.Events) != 3) {
			t.Fatalf("after the update: %+v, want the radio's own 3 events", x.Attributes.RadioLog)
		}
	}
}

// The log keeps its newest radioLogMax events and says how many it left out.
func TestRadioLogKeepsTheNewestEvents(t *testing.T) {
	device := freshDevice()
	r := radioFor(device, radioLTE)
	at := time.Now().Add(-time.Hour)
	for i := 0; i < radioLogMax; i++ { // each send after a quiet past tailQuiet: a resume and a tail-start
		r.send(at, true, 10)
		at = at.Add(time.Second)
	}
	log := logOf(device, radioLTE, time.Now())
	if len(log.Events) != radioLogMax || log.Dropped == 0 {
		t.Fatalf("%d events, %d dropped: want %d and some dropped", len(log.Events), log.Dropped, radioLogMax)
	}
	if last := log.Events[len(log.Events)-1]; last[1] != eventDemotion {
		t.Fatalf("the newest event is %v, want the demotion after the last packet", last)
	}
	total := len(RadioEvents(device, radioLTE, time.Now()))
	if log.Dropped != total-radioLogMax {
		t.Fatalf("dropped %d, want %d (the log holds %d)", log.Dropped, total-radioLogMax, total)
	}
}

// A NAT that forgot a connection drops what the phone sends on it, beyond the phone's
// radio: the send wakes the radio all the same (its log shows the radio busy again
// when the client sent), though nothing reaches the server.
func TestANATDroppedSendStillWakesTheRadio(t *testing.T) {
	const idle = 300 * time.Millisecond
	device := freshDevice()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "natradio", "127.0.0.1:0", echoServer(t))
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Stop)
	attrs := fmt.Sprintf(`"nat_idle":%d,"radio":1,"radio_device":%d`, idle.Milliseconds(), device)
	for _, j := range []string{
		`{"name":"link_up","type":"link","stream":"upstream","attributes":{` + attrs + `,"uplink":1}}`,
		`{"name":"link_down","type":"link","stream":"downstream","attributes":{` + attrs + `}}`,
	} {
		if _, err := proxy.Toxics.AddToxicJson(strings.NewReader(j)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := net.Dial("tcp", proxy.Listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := echoOnce(c, 2*time.Second); err != nil {
		t.Fatalf("before the NAT's timeout: %v", err)
	}
	time.Sleep(idle + 200*time.Millisecond) // past the NAT's timeout, within LTE's tail
	sent := time.Now()
	if err := echoOnce(c, 500*time.Millisecond); err == nil {
		t.Fatal("the NAT let a send through after its timeout")
	}
	var resumed *RadioEvent
	for _, e := range RadioEvents(device, radioLTE, time.Now()) {
		if e.Kind == eventResume && !e.At.Before(sent.Add(-5*time.Millisecond)) {
			e := e
			resumed = &e
		}
	}
	if resumed == nil || resumed.At.Sub(sent) > 50*time.Millisecond {
		t.Fatalf("the dropped send did not wake the radio at %v: %+v", sent, RadioEvents(device, radioLTE, time.Now()))
	}
}
