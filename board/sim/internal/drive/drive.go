package drive

import (
	"math/rand/v2"
	"sort"
	"time"
)

// Speeds are in 1/256 km/h, the J1939 CCVS resolution.
const (
	KmH       = 256
	CruiseMin = 20 * KmH
	CruiseMax = 90 * KmH
	// Accel is a loaded truck's 1 m/s², 3.6 km/h per second. Smoothstep
	// ramps peak at 1.5 times this.
	Accel = 36 * KmH / 10

	stopOneIn = 4 // one leg in stopOneIn ends at a standstill
	rampMin   = 2 * time.Second
	legMin    = 8 * time.Second // a leg is a ramp then a steady stretch
	legMax    = 25 * time.Second
	unit      = 1 << 16 // fixed-point one for the smoothstep
)

// leg ramps smoothly from one speed to another, then holds it.
type leg struct {
	start, ramp time.Duration
	from, to    int64
}

// Drive is a seeded trip from a standstill at 0 to past its duration.
type Drive struct{ legs []leg }

// New draws a trip of at least d from r.
func New(r *rand.Rand, d time.Duration) Drive {
	var legs []leg
	var v int64
	for t := time.Duration(0); t < d; {
		to := CruiseMin + r.Int64N(CruiseMax-CruiseMin+1)
		if len(legs) > 0 && r.IntN(stopOneIn) == 0 {
			to = 0
		}
		ramp := max(rampMin, time.Duration(abs(to-v))*time.Second/Accel)
		legs = append(legs, leg{start: t, ramp: ramp, from: v, to: to})
		t += ramp + legMin + time.Duration(r.Int64N(int64(legMax-legMin)))
		v = to
	}
	return Drive{legs: legs}
}

// Phase tells whether the truck is speeding up (+1), slowing (-1) or steady (0).
type Phase int

// speed is the speed (1/256 km/h) and phase at offset t.
func (d Drive) speed(t time.Duration) (int64, Phase) {
	i := sort.Search(len(d.legs), func(i int) bool { return d.legs[i].start > t }) - 1
	l := d.legs[max(i, 0)]
	if dt := t - l.start; dt < l.ramp {
		u := int64(dt) * unit / int64(l.ramp)
		s := u * u / unit * (3*unit - 2*u) / unit // 3u² - 2u³
		return l.from + (l.to-l.from)*s/unit, Phase(sign(l.to - l.from))
	}
	return l.to, 0
}

func abs(x int64) int64 { return max(x, -x) }

func sign(x int64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
