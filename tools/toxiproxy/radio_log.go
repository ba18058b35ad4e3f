package main

// The radio's event log, readable through Toxiproxy's own API (issue 41): the
// link toxic that carries the phone's packets (uplink 1) of a device with a
// radio reports, beside its attributes, a read-only `radio_log`, so
// `GET /proxies/<name>/toxics` (and `GET /proxies`) return it with no patch of
// Toxiproxy's API:
//
//	radio_log: {
//	  radio:   "lte" | "3g" (common/radio.js RADIOS' names)
//	  device:  the radio_device
//	  now:     the server's clock when it was read (Unix ms, 3 decimals)
//	  dropped: how many older events the log no longer carries (radioLogMax)
//	  events:  [[at (Unix ms), kind, from, to], ...] oldest first (radio.go RadioEvent)
//	}
//
// Every uplink toxic of the device reports the same radio (the device's); a
// downlink toxic reports none, so a proxy lists the log once. The log is read
// under the radio's lock (radio.events), with the timers that ran out by now
// applied. Toxiproxy ignores radio_log in an update's attributes: LinkToxic has
// no field of that name to decode it into (common/toxics.js leaves it out of
// the snapshot it puts back).

import (
	"encoding/json"
	"time"
)

// radioLogMax: the most events radio_log carries (the newest): 2,000 events are
// about 100 KB, an hour of one operation every 10 s is about 1,500.
const radioLogMax = 2000

var radioNames = map[radioKind]string{radioLTE: "lte", radioUMTS: "3g"}

type radioLog struct {
	Radio   string          `json:"radio"`
	Device  int64           `json:"device"`
	Now     float64         `json:"now"`
	Dropped int             `json:"dropped"`
	Events  [][]interface{} `json:"events"`
}

// unixMs: a time as Unix ms with microseconds (3 decimals).
func unixMs(t time.Time) float64 { return float64(t.UnixMicro()) / 1000 }

// logOf: the radio_log of a device's radio at `now` (nil: that radio never carried a packet).
func logOf(device int64, kind radioKind, now time.Time) *radioLog {
	radios.Lock()
	r := radios.m[radioKey{device, kind}]
	radios.Unlock()
	if r == nil {
		return nil
	}
	events, dropped := r.lastEvents(now, radioLogMax)
	out := &radioLog{Radio: radioNames[kind], Device: device, Now: unixMs(now), Dropped: dropped, Events: make([][]interface{}, 0, len(events))}
	for _, e := range events {
		out.Events = append(out.Events, []interface{}{unixMs(e.At), e.Kind, e.From, e.To})
	}
	return out
}

// lastEvents: the newest max events at now, and how many older ones are left out
// (those the log dropped itself included).
func (r *radio) lastEvents(now time.Time, max int) ([]RadioEvent, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settle(now)
	skip := 0
	if len(r.log) > max {
		skip = len(r.log) - max
	}
	return append([]RadioEvent(nil), r.log[skip:]...), skip + r.dropped
}

// linkAttributes: LinkToxic without its methods, so MarshalJSON does not call itself.
type linkAttributes LinkToxic

// MarshalJSON: the toxic's attributes as Toxiproxy lists them, and radio_log
// on the uplink toxic of a device with a radio.
func (t *LinkToxic) MarshalJSON() ([]byte, error) {
	var log *radioLog
	if t.Uplink == 1 && paramsOf(radioKind(t.Radio)) != nil {
		log = logOf(t.Device, radioKind(t.Radio), time.Now())
		if log == nil { // no packet yet: an empty log (the radio is idle)
			log = &radioLog{Radio: radioNames[radioKind(t.Radio)], Device: t.Device, Now: unixMs(time.Now()), Events: [][]interface{}{}}
		}
	}
	return json.Marshal(struct {
		*linkAttributes
		RadioLog *radioLog `json:"radio_log,omitempty"`
	}{(*linkAttributes)(t), log})
}
