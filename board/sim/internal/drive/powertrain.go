package drive

import "time"

// gears is a six-speed truck gearbox: each gear is used below top (1/256
// km/h); ratio is ×RatioRes.
var gears = [...]struct{ top, ratio int64 }{
	{10 * KmH, 9340}, {18 * KmH, 5190}, {30 * KmH, 3110},
	{45 * KmH, 2080}, {65 * KmH, 1440}, {CruiseMax + KmH, 850},
}

const (
	Gears    = len(gears)
	IdleRPM  = 650
	RPMRes   = 8    // engine and shaft speeds count 1/8 rpm (J1939 0.125 rpm/bit)
	RatioRes = 1000 // gear ratios count 0.001 (J1939 ETC2)
	// outputPerKmh is propshaft rpm per km/h, ×RatioRes: a 3.70 axle on
	// 3.2 m tyres.
	outputPerKmh = 19270
)

// State is the powertrain at one moment.
type State struct {
	Speed  int64 // 1/256 km/h
	Phase  Phase
	Gear   int   // 1 to Gears
	Ratio  int64 // gear ratio, 1/RatioRes
	Output int64 // propshaft speed, 1/RPMRes rpm
	Engine int64 // engine speed, 1/RPMRes rpm, never below IdleRPM
}

// At derives the powertrain at t: the gear for the speed, the propshaft
// from the wheels, the engine from the gear.
func (d Drive) At(t time.Duration) State {
	v, p := d.speed(t)
	g := 0
	for g < Gears-1 && v >= gears[g].top {
		g++
	}
	out := v * outputPerKmh * RPMRes / (KmH * RatioRes)
	return State{
		Speed: v, Phase: p, Gear: g + 1, Ratio: gears[g].ratio, Output: out,
		Engine: max(IdleRPM*RPMRes, out*gears[g].ratio/RatioRes),
	}
}
