package main

// The radio parameter sets of the link toxic's `+rrc` (radio.go), each value
// with its source, in this one place (docs/model.md's sources name the same).
// common/radio.js holds the same timings for the model, with each state's
// power; common/radio.test.js reads this file and fails when they disagree.
//
// Sources:
//
//	[H12]  J. Huang, F. Qian, A. Gerber, Z. M. Mao, S. Sen, O. Spatscheck: "A Close
//	       Examination of Performance and Power Characteristics of 4G LTE Networks",
//	       MobiSys 2012. Table 3 (LTE RRC and DRX parameters, measured) and Table 4
//	       (the power model: each state's power and duration).
//	[Q10]  F. Qian, Z. Wang, A. Gerber, Z. M. Mao, S. Sen, O. Spatscheck:
//	       "Characterizing Radio Resource Allocation for 3G Networks", IMC 2010,
//	       Table 1 (the inferred state machine of carrier 1: timers, promotion
//	       delays, RLC buffer thresholds) and section 3 (the FACH buffer's
//	       consumption time).
//	[ARO]  AT&T Video Optimizer (ARO), the tool of the same authors' group:
//	       ARO.Core/src/main/resources/lte.conf and ProfileFactoryImpl.java
//	       (create3G, createLTE defaults), github.com/attdevsupport/VideoOptimizer.
//	       Where its default agrees with the value cited from the paper, the
//	       value is marked "ARO agrees".
//
// Unverified: the pack could read the papers' first pages only, not their
// tables. The values below marked "unverified" are the ones commonly cited
// from those tables (and, where given, the defaults of [ARO]); check them
// against the tables before quoting a figure built on them.

import "time"

type radioKind int64

// The link toxic's `radio` attribute (common/profiles.js RADIO_CODES).
const (
	radioNone radioKind = iota
	radioLTE
	radioUMTS
)

// radioParams: one radio technology's state machine.
type radioParams struct {
	kind radioKind
	// promotion: IDLE -> CONNECTED (LTE) or IDLE -> DCH (3G): a packet that
	// finds the radio idle waits this long.
	promotion time.Duration
	// tail: how long the radio stays up after its last packet: LTE's RRC
	// inactivity timer (CONNECTED -> IDLE), 3G's DCH timer (DCH -> FACH).
	tail time.Duration

	// LTE's DRX in RRC_CONNECTED: after drxInactivity without a packet the
	// radio listens only in on-periods, every shortCycle for shortTimer, then
	// every longCycle until the tail ends.
	drxInactivity time.Duration
	shortTimer    time.Duration
	shortCycle    time.Duration
	longCycle     time.Duration
	onDuration    time.Duration

	// 3G's FACH: fachTail (FACH -> IDLE) after the last packet in FACH;
	// fachPromotion (FACH -> DCH) when a direction's RLC buffer passes its
	// threshold (bytes); below it, FACH carries the bytes slowly (fachDrain).
	fachTail      time.Duration
	fachPromotion time.Duration
	rlcUp         int
	rlcDown       int
}

// lteParams: [H12].
var lteParams = radioParams{
	kind:          radioLTE,
	promotion:     260 * time.Millisecond,   // Tpro 260.1 ms: [H12] Table 4 (LTE promotion); unverified, ARO agrees (T_PROMOTION 0.26 s)
	tail:          11576 * time.Millisecond, // Ttail 11.576 s: [H12] Table 3 (RRC inactivity timer); unverified (ARO's is about 10.12 s: 0.1 + 0.02 + 10)
	drxInactivity: 100 * time.Millisecond,   // Ti 100 ms: [H12] Table 3 (DRX inactivity timer); unverified, ARO agrees (INACTIVITY_TIMER 0.1 s)
	shortTimer:    20 * time.Millisecond,    // Tis 20 ms: [H12] Table 3 (short DRX cycle timer); unverified, ARO agrees (T_SHORT_DRX 0.02 s)
	shortCycle:    20 * time.Millisecond,    // Tps 20 ms: [H12] Table 3 (short DRX cycle); unverified, ARO agrees
	longCycle:     40 * time.Millisecond,    // Tpl 40 ms: [H12] Table 3 (long DRX cycle); unverified, ARO agrees
	onDuration:    1 * time.Millisecond,     // Ton 1 ms: [H12] Table 3 (on duration in RRC_CONNECTED); unverified (ARO: T_DRX_PING 2 ms)
}

// umtsParams: [Q10], carrier 1.
var umtsParams = radioParams{
	kind:          radioUMTS,
	promotion:     2 * time.Second,         // IDLE -> DCH about 2 s: [Q10] Table 1; unverified, ARO agrees (IDLE_DCH_PROMO_AVG 2.0 s)
	tail:          5 * time.Second,         // DCH -> FACH timer (alpha) 5 s: [Q10] Table 1; unverified; ARO's hard-coded fallback agrees (DCH_FACH_TIMER 5), its shipped 3G profiles (i997.conf, AT&T 3G) say 4 s
	fachTail:      12 * time.Second,        // FACH -> IDLE timer (beta) 12 s: [Q10] Table 1; unverified; ARO's fallback agrees (FACH_IDLE_TIMER 12), its shipped profiles say 10 s
	fachPromotion: 1500 * time.Millisecond, // FACH -> DCH about 1.5 s: [Q10] Table 1; unverified, ARO agrees (FACH_DCH_PROMO_AVG 1.5 s)
	rlcUp:         540,                     // uplink RLC buffer threshold 540 B: [Q10] Table 1; unverified (ARO: RLC_UL_TH 543)
	rlcDown:       475,                     // downlink RLC buffer threshold 475 B: [Q10] Table 1; unverified, ARO agrees (RLC_DL_TH 475)
}

// fachDrain: how long FACH takes to carry n bytes of one direction: the
// buffer's consumption time as [Q10] fits it, uplink 0.0014 n^2 + 1.6 n + 20
// ms, downlink 0.1 n + 10 ms. Unverified: the coefficients are [ARO]'s
// defaults (RLC_UL_RATE_P2/P1/P0, RLC_DL_RATE_P1/P0), attributed to [Q10].
func fachDrain(up bool, n int) time.Duration {
	x := float64(n)
	msec := 0.1*x + 10
	if up {
		msec = 0.0014*x*x + 1.6*x + 20
	}
	return time.Duration(msec * float64(time.Millisecond))
}

// paramsOf: the parameter set of a `radio` attribute (nil: no radio).
func paramsOf(k radioKind) *radioParams {
	switch k {
	case radioLTE:
		return &lteParams
	case radioUMTS:
		return &umtsParams
	}
	return nil
}
