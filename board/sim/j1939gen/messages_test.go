package j1939gen

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"fieldtap/board/sim/internal/drive"
)

// vinCheckDigit computes position 9 of a VIN (49 CFR 565.15).
func vinCheckDigit(vin string) byte {
	const letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
	values := []int{1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 7, 9, 2, 3, 4, 5, 6, 7, 8, 9}
	weights := []int{8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2}
	sum := 0
	for i, c := range vin {
		v := int(c - '0')
		if c > '9' {
			v = values[strings.IndexRune(letters, c)]
		}
		sum += v * weights[i]
	}
	if sum%11 == 10 {
		return 'X'
	}
	return byte('0' + sum%11)
}

func TestVINConstant(t *testing.T) {
	if len(VIN) != 17 || strings.ContainsAny(VIN, "IOQ") || VIN[8] != vinCheckDigit(VIN) {
		t.Fatalf("VIN %q: want 17 characters without I, O, Q and check digit %c", VIN, vinCheckDigit(VIN))
	}
}

// TestBAM reassembles every VIN broadcast: TP.CM announcing PGN 65260, then
// TP.DT packets 1..n at least 50 ms apart, payload VIN + '*', 0xFF padding.
func TestBAM(t *testing.T) {
	const cmID, dtID = 0x1CECFF00, 0x1CEBFF00
	fs := collect(t, Options{Seed: 5, Start: t0, Duration: 30 * time.Second})
	var msg []byte
	var last time.Time
	var size, packets, seq, done int
	for i, f := range fs {
		switch f.ID {
		case cmID:
			if seq != packets {
				t.Fatalf("frame %d: TP.CM after %d of %d packets", i, seq, packets)
			}
			d := f.Data
			if len(d) != 8 || d[0] != tpBAM || d[4] != 0xFF || uint32(d[5])|uint32(d[6])<<8|uint32(d[7])<<16 != pgnVI {
				t.Fatalf("frame %d: TP.CM % X, want BAM of PGN %d", i, d, pgnVI)
			}
			size, packets = int(binary.LittleEndian.Uint16(d[1:])), int(d[3])
			msg, seq, last = nil, 0, f.Time
		case dtID:
			seq++
			if gap := f.Time.Sub(last); len(f.Data) != 8 || int(f.Data[0]) != seq || gap < tpGap || gap > tpGap+busSlack {
				t.Fatalf("frame %d: TP.DT % X %v after the previous packet; want seq %d, %v apart", i, f.Data, gap, seq, tpGap)
			}
			msg, last = append(msg, f.Data[1:]...), f.Time
			if seq == packets {
				want := VIN + "*"
				if string(msg[:size]) != want || bytes.Count(msg[size:], []byte{0xFF}) != len(msg)-size || packets != (size+6)/7 {
					t.Fatalf("BAM %d: %d bytes in %d packets reassemble to %q, want %q padded with 0xFF",
						done, size, packets, msg, want)
				}
				done++
			}
		}
	}
	if want := 6; done != want {
		t.Fatalf("%d VIN broadcasts in 30 s, want %d", done, want)
	}
}

// TestDM1 decodes the fault with the SAE J1939-73 layout, independently of
// the encoder.
func TestDM1(t *testing.T) {
	n := 0
	for _, f := range collect(t, Options{Seed: 6, Start: t0, Duration: 5 * time.Second}) {
		if f.ID != 0x18FECA00 {
			continue
		}
		n++
		d := f.Data
		spn := uint32(d[2]) | uint32(d[3])<<8 | uint32(d[4]>>5)<<16
		fmi, cm, oc := d[4]&0x1F, d[5]>>7, d[5]&0x7F
		redStop := d[0] >> 4 & 0x3
		if len(d) != 8 || spn != FaultSPN || fmi != FaultFMI || cm != 0 || oc != FaultOccurrences || redStop != 1 {
			t.Fatalf("DM1 % X: SPN %d FMI %d CM %d OC %d red stop %d; want %d %d 0 %d 1",
				d, spn, fmi, cm, oc, redStop, FaultSPN, FaultFMI, FaultOccurrences)
		}
	}
	if n == 0 {
		t.Fatal("no DM1 in 5 s")
	}
}

// TestSignals decodes the drive: speeds in range and changing smoothly,
// gears and engine speed agreeing with the speed.
func TestSignals(t *testing.T) {
	fs := collect(t, Options{Seed: 8, Start: t0, Duration: 5 * time.Minute})
	// smoothstep's steepest slope is 1.5 times the ramp's mean (accel).
	maxStep := int(3*drive.Accel/2*int64(100*time.Millisecond+2*(maxJitter+busSlack))/int64(time.Second)) + 1
	prevSpeed, moved := -1, false
	for i, f := range fs {
		d := f.Data
		switch f.ID {
		case 0x18FEF100: // CCVS
			speed := int(binary.LittleEndian.Uint16(d[1:]))
			if speed > drive.CruiseMax || (prevSpeed >= 0 && max(speed-prevSpeed, prevSpeed-speed) > maxStep) {
				t.Fatalf("frame %d: speed %d/256 km/h after %d/256, want ≤ %d and steps ≤ %d", i, speed, prevSpeed, drive.CruiseMax, maxStep)
			}
			moved = moved || speed > drive.CruiseMin
			prevSpeed = speed
		case 0x18F00503: // ETC2
			gear := int(d[3]) - pctOffset
			if gear < 1 || gear > drive.Gears || d[0] != d[3] {
				t.Fatalf("frame %d: ETC2 % X: gear %d", i, d, gear)
			}
		case 0x0CF00400: // EEC1
			rpm := int(binary.LittleEndian.Uint16(d[3:])) / drive.RPMRes
			const redline = 2100
			if rpm < drive.IdleRPM || rpm > redline {
				t.Fatalf("frame %d: engine at %d rpm, want %d to %d", i, rpm, drive.IdleRPM, redline)
			}
		}
	}
	if !moved {
		t.Fatal("the truck never drove faster than drive.CruiseMin in 5 minutes")
	}
}
