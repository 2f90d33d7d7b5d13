package j1939

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
)

// cpg lays out one C-PG: TOS 2 (normal data), trailer format tf, the
// 18-bit PGN, the length and the payload.
func cpg(tf uint8, pgn uint32, payload []byte) []byte {
	return append([]byte{2<<5 | tf<<2 | byte(pgn>>16&3), byte(pgn >> 8), byte(pgn), byte(len(payload))}, payload...)
}

// TestMultiPGDecodesAsSingleFrames feeds the same parameter groups twice:
// as classic single frames from SA 0x00, and packed as C-PGs into CAN FD
// Multi-PG frames from the same SA. The messages out of the C-PGs must be
// those of the single frames (PGN, SA, DA, data), Via multi-pg; a C-PG
// with a trailer, a truncated one and FD.TP frames are counted as not
// decoded.
func TestMultiPGDecodesAsSingleFrames(t *testing.T) {
	eec1 := []byte{0xF0, 0x7D, 0x7D, 0x40, 0x1F, 0x00, 0xF0, 0x7D} // engine speed 1000 rpm
	dm1 := []byte{0x04, 0xFF, 0x6E, 0x00, 0x05, 0x01, 0xFF, 0xFF}  // SPN 110 FMI 5, amber... lamps
	ccvs := []byte{0xFF, 0x00, 0x32, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	type pg struct {
		pgn  uint32
		data []byte
	}
	pgs := []pg{{PGNEEC1, eec1}, {PGNDM1, dm1}, {0xFEF1, ccvs}}

	type seen struct {
		pgn    uint32
		sa, da uint8
		data   []byte
		via    TPKind
	}
	collect := func(d *Decoder, out *[]seen) {
		d.OnMessage = func(m *Message) {
			if m.ID.PGN == PGNMultiPG || m.ID.PGN == PGNFDTPCM || m.ID.PGN == PGNFDTPDT {
				return // the carrier frames themselves, given as TP.CM frames are
			}
			*out = append(*out, seen{m.ID.PGN, m.ID.SA, m.ID.DA, bytes.Clone(m.Data), m.Via})
		}
	}
	t0 := time.Unix(1_767_225_600, 0)
	var classic, fd []seen
	dc, dfd := NewDecoder(), NewDecoder()
	collect(dc, &classic)
	collect(dfd, &fd)
	for _, p := range pgs {
		dc.Feed(t0, 6<<26|p.pgn<<8, true, p.data) // from SA 0x00
	}
	// One Multi-PG frame of all three, padded to 48 bytes as a controller
	// pads 36 bytes on the bus (TOS 0 from there); a second with a
	// trailer C-PG before EEC1 again, then one whose C-PG runs past it.
	var one []byte
	for _, p := range pgs {
		one = append(one, cpg(0, p.pgn, p.data)...)
	}
	one = append(one, make([]byte, 48-len(one))...)
	two := append(cpg(1, 0xFEF1, append(ccvs, 1, 2, 3, 4)), cpg(0, PGNEEC1, eec1)...)
	bad := append(cpg(0, PGNEEC1, eec1), cpg(0, 0xFEF1, ccvs)[:6]...)
	mpgID := uint32(6<<26 | PGNMultiPG<<8 | 0xFF<<8) // to global (DA 0xFF), from SA 0x00
	for _, f := range [][]byte{one, two, bad} {
		dfd.Feed(t0, mpgID, true, f)
	}
	dfd.Feed(t0, 7<<26|PGNFDTPCM<<8|0x21<<8, true, make([]byte, 12))
	dfd.Feed(t0, 7<<26|PGNFDTPDT<<8|0x21<<8, true, make([]byte, 64))

	want := append(slices.Clone(classic), classic[0], classic[0])
	if len(fd) != len(want) {
		t.Fatalf("%d messages out of the Multi-PG frames, want %d: %+v", len(fd), len(want), fd)
	}
	for i := range want {
		w, g := want[i], fd[i]
		w.via, w.da = ViaMultiPG, 0xFF
		if g.pgn != w.pgn || g.sa != w.sa || g.da != w.da || !bytes.Equal(g.data, w.data) || g.via != w.via {
			t.Errorf("message %d: %+v, want %+v", i, g, w)
		}
	}
	got := dfd.MultiPG()
	if want := (MultiPGCounters{Frames: 3, CPGs: 5, Trailer: 1, Malformed: 1, FDTP: 2}); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}

	// Through the store, as the daemon feeds it: the C-PG's PGNs count,
	// the DM1 lists its fault, the summary carries the counters.
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := s.Feeder("can0")
	var r canbus.Record
	r.Time, r.ID = t0, mpgID|wire.CANEFF
	r.SetData(wire.CANFDFDF|wire.CANFDBRS, one)
	f.FeedAll([]canbus.Record{r})
	sum := s.Summary()[0]
	if sum.MultiPG.CPGs != 3 || sum.DistinctPGNs != 4 {
		t.Errorf("summary: multi-PG %+v, %d PGNs (want 3 C-PGs, 4 PGNs with the Multi-PG's own)", sum.MultiPG, sum.DistinctPGNs)
	}
	if sum.ActiveDTCs != 1 {
		t.Errorf("the DM1 C-PG's fault: %d active DTCs, want 1", sum.ActiveDTCs)
	}
}

// FuzzMultiPG feeds anything as a Multi-PG frame: no input panics, and
// every byte is a header, a payload, padding or a counted fault.
func FuzzMultiPG(f *testing.F) {
	f.Add(append(cpg(0, PGNEEC1, make([]byte, 8)), 0, 0, 0, 0))
	f.Add(cpg(1, 0xFEF1, make([]byte, 60)))
	f.Add([]byte{0x40, 0xFE, 0xF1, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > wire.MaxCANFDData {
			return
		}
		d := NewDecoder()
		n := 0
		d.OnMessage = func(m *Message) {
			if m.Via == ViaMultiPG {
				n += cpgHeader + len(m.Data)
			}
		}
		d.Feed(time.Unix(0, 0), PGNMultiPG<<8, true, b)
		if n > len(b) {
			t.Fatalf("C-PGs of %d bytes out of a %d-byte frame", n, len(b))
		}
		if c := d.MultiPG(); c.Frames != 1 || c.CPGs+c.Trailer > uint64(len(b)/cpgHeader) {
			t.Fatalf("counters %+v for %d bytes", c, len(b))
		}
	})
}
