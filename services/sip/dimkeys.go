package sip

import (
	"encoding/binary"
	"net/netip"
	"slices"
	"strconv"
)

// keyer numbers the values of one dimension as Aggregate and GroupMetrics
// meet them, so a dialog's buckets are small ids found by the value as
// the dialog holds it (a string, a code, an address) and the bucket's
// text (Dialog.DimensionValues) is built once per distinct value rather
// than once per dialog. Every id has a distinct text: the empty string
// and code 0 are NoValue's id, codes and addresses print distinctly and
// never as NoValue.
type keyer struct {
	dim   int // its index in Dimensions: a switch on it per dialog is a jump, on its name a string compare
	strs  map[string]int32
	codes map[int]int32
	// statuses are the ids of the codes 100 to 699, plus one (0: none yet).
	statuses [600]int32
	addrs    map[netip.Addr]int32
	// v4s are the IPv4 addresses' ids by their four bytes: nearly every
	// participant is one, and a 4-byte key hashes and compares in a few
	// instructions where an Addr's 24 bytes do not.
	v4s    map[uint32]int32
	values []string // id → the bucket's value
	texts  int64    // the bytes of the values the keyer made (addText)
	ids    []int32  // keys' answer, reused
}

// The dimensions as keyer switches on them: their indexes in Dimensions.
const (
	dimMethod = iota
	dimState
	dimFinalCode
	dimFromUser
	dimToUser
	dimSrcIP
	dimDstIP
	dimUserAgent
	dimTransport
	dimParticipantIP
	dimParticipantUser
)

// newKeyer numbers dim's values; dim must be one of Dimensions.
func newKeyer(dim string) *keyer {
	return &keyer{dim: dimIndex(dim), strs: map[string]int32{}, codes: map[int]int32{}, addrs: map[netip.Addr]int32{}, v4s: map[uint32]int32{}}
}

// dimIndex is dim's index in Dimensions; dim must be one of them.
func dimIndex(dim string) int {
	i := slices.Index(Dimensions, dim)
	if i < 0 {
		panic("sip: aggregate by an unknown dimension " + strconv.Quote(dim))
	}
	return i
}

// keys returns d's ids in the dimension, as DimensionValues returns its
// values: one in a single-valued dimension, each distinct participant
// (NoValue without one) in a MultiDimension. The slice is reused by the
// next call.
func (k *keyer) keys(d *Dialog) []int32 {
	k.ids = k.ids[:0]
	switch k.dim {
	case dimMethod:
		k.str(d.FirstMethod)
	case dimState:
		k.str(d.State)
	case dimFinalCode:
		k.code(d.FinalCode)
	case dimFromUser:
		k.str(d.FromUser)
	case dimToUser:
		k.str(d.ToUser)
	case dimSrcIP:
		k.addr(d.Src.Addr())
	case dimDstIP:
		k.addr(d.Dst.Addr())
	case dimUserAgent:
		if len(d.UserAgents) > 0 {
			k.str(d.UserAgents[0])
		} else {
			k.str("")
		}
	case dimTransport:
		k.str(d.Transport)
	case dimParticipantIP:
		for _, p := range d.Participants {
			k.addr(p.Addr().Unmap())
		}
	case dimParticipantUser:
		for _, u := range [...]string{d.FromUser, d.ToUser} {
			if u != "" {
				k.str(u)
			}
		}
	}
	if len(k.ids) == 0 {
		k.str("")
	}
	return k.ids
}

func (k *keyer) str(s string) {
	if s == "" {
		s = NoValue
	}
	id, ok := k.strs[s]
	if !ok {
		id = k.add(s)
		k.strs[s] = id
	}
	k.once(id)
}

func (k *keyer) code(c int) {
	if c == 0 {
		k.str("")
		return
	}
	if c >= 100 && c < 700 { // a status code: an array, not a map
		id := k.statuses[c-100] - 1
		if id < 0 {
			id = k.addText(strconv.Itoa(c))
			k.statuses[c-100] = id + 1
		}
		k.once(id)
		return
	}
	id, ok := k.codes[c]
	if !ok {
		id = k.addText(strconv.Itoa(c))
		k.codes[c] = id
	}
	k.once(id)
}

func (k *keyer) addr(a netip.Addr) {
	if a.Is4() {
		b := a.As4()
		v := binary.BigEndian.Uint32(b[:])
		id, ok := k.v4s[v]
		if !ok {
			id = k.addText(a.String())
			k.v4s[v] = id
		}
		k.once(id)
		return
	}
	id, ok := k.addrs[a]
	if !ok {
		id = k.addText(a.String())
		k.addrs[a] = id
	}
	k.once(id)
}

// warm reads, for a block of dialogs, what keys will read of each, in
// loads independent of one another so the processor overlaps their cache
// misses; keys, reading right after its dialog's miss, waits for each in
// turn (at 100,000 dialogs most dialogs are a miss: docs/benchmarks.md).
func (k *keyer) warm(ds []*Dialog) {
	var s uint64
	for _, d := range ds {
		switch k.dim {
		case dimMethod:
			s += uint64(len(d.FirstMethod))
		case dimState:
			s += uint64(len(d.State))
		case dimFinalCode:
			s += uint64(d.FinalCode)
		case dimFromUser:
			s += firstByte(d.FromUser)
		case dimToUser:
			s += firstByte(d.ToUser)
		case dimParticipantUser:
			s += firstByte(d.FromUser) + firstByte(d.ToUser)
		case dimSrcIP:
			s += uint64(d.Src.Port())
		case dimDstIP:
			s += uint64(d.Dst.Port())
		case dimUserAgent:
			if len(d.UserAgents) > 0 {
				s += firstByte(d.UserAgents[0])
			}
		case dimTransport:
			s += uint64(len(d.Transport))
		case dimParticipantIP:
			// The first and the last: two participants span two lines.
			if n := len(d.Participants); n > 0 {
				s += uint64(d.Participants[0].Port()) + uint64(d.Participants[n-1].Port())
			}
		}
	}
	warmSink.Add(s)
}

func firstByte(s string) uint64 {
	if s == "" {
		return 0
	}
	return uint64(s[0])
}

func (k *keyer) add(v string) int32 {
	k.values = append(k.values, v)
	return int32(len(k.values) - 1)
}

// addText adds v, a text the keyer made (a code's or an address's),
// counting its bytes: a string dimension's values are the dialogs' own.
func (k *keyer) addText(v string) int32 {
	k.texts += int64(len(v))
	return k.add(v)
}

// once appends id unless the dialog already has it: a participant seen
// on both sides counts once.
func (k *keyer) once(id int32) {
	for _, have := range k.ids {
		if have == id {
			return
		}
	}
	k.ids = append(k.ids, id)
}
