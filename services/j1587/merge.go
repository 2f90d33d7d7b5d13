package j1587

import (
	"cmp"
	"encoding/hex"
	"slices"
	"time"

	"fieldtap/services/ring"
)

// The Store's reads cover every port: one page order by Record.Seq, sums
// of counters, and per (MID, PID) or fault the newest value with the
// counts of all ports added. A Port's reads are the same over one port.

// aggregate is the counters and tables of one or more ports, merged.
type aggregate struct {
	byStatus [len(msgStatusNames)]uint64
	j2497    uint64
	overflow Overflow
	mids     [256]midStats
	latest   map[latestKey]latest
	faults   map[faultKey]faultEntry
	stored   ring.Stats
}

func aggregateOf(ports ...*Port) *aggregate {
	a := &aggregate{latest: map[latestKey]latest{}, faults: map[faultKey]faultEntry{}}
	for _, p := range ports {
		a.add(p)
	}
	return a
}

// add merges one port, under its lock.
func (a *aggregate) add(s *Port) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range s.byStatus {
		a.byStatus[i] += n
	}
	a.j2497 += s.j2497
	o := &a.overflow
	o.Latest += s.overflow.Latest
	o.Faults += s.overflow.Faults
	o.Assemblies += s.overflow.Assemblies
	o.SectionErrors += s.overflow.SectionErrors
	o.FaultTableErrs += s.overflow.FaultTableErrs
	for mid := range s.mids {
		m, from := &a.mids[mid], &s.mids[mid]
		if from.messages == 0 && from.faultTable.IsZero() {
			continue
		}
		m.messages += from.messages
		m.checksumBad += from.checksumBad
		m.decodeErrors += from.decodeErrors
		m.j2497 += from.j2497
		if m.first.IsZero() || (!from.first.IsZero() && from.first.Before(m.first)) {
			m.first = from.first
		}
		m.last = later(m.last, from.last)
		m.faultTable = later(m.faultTable, from.faultTable)
	}
	for k, l := range s.latest {
		have, ok := a.latest[k]
		if !ok {
			l.data = slices.Clone(l.data)
			a.latest[k] = l
			continue
		}
		merged := have
		if l.time.After(have.time) {
			merged.time, merged.j2497, merged.data = l.time, l.j2497, slices.Clone(l.data)
		}
		merged.count += l.count
		if l.numbers > 0 {
			if merged.numbers == 0 || l.min < merged.min {
				merged.min = l.min
			}
			if merged.numbers == 0 || l.max > merged.max {
				merged.max = l.max
			}
			merged.numbers += l.numbers
		}
		a.latest[k] = merged
	}
	for k, e := range s.faults {
		have, ok := a.faults[k]
		if !ok {
			a.faults[k] = *e
			continue
		}
		merged := have
		if e.last.After(have.last) {
			merged.Fault, merged.last = e.Fault, e.last
		}
		if e.first.Before(have.first) {
			merged.first = e.first
		}
		merged.reports += e.reports
		merged.inLatest = have.inLatest || e.inLatest
		a.faults[k] = merged
	}
	st := s.msgs.Stats()
	a.stored.Items += st.Items
	a.stored.Bytes += st.Bytes
	a.stored.Limits.Items += st.Limits.Items
	a.stored.Limits.Bytes += st.Limits.Bytes
	a.stored.Evicted += st.Evicted
	a.stored.EvictedBytes += st.EvictedBytes
	a.stored.Oversize += st.Oversize
	a.stored.Appended += st.Appended
	a.stored.Revision += st.Revision
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (a *aggregate) summary() Summary {
	sum := Summary{ByStatus: map[string]uint64{}, J2497: a.j2497, Overflow: a.overflow, MIDs: []MIDSummary{}, Stored: a.stored}
	for st, n := range a.byStatus {
		sum.Messages += n
		sum.ByStatus[msgStatusNames[st]] = n
	}
	sum.ChecksumBad = a.byStatus[MsgChecksum] + a.byStatus[MsgLength]
	sum.ChecksumOK = sum.Messages - sum.ChecksumBad
	active := map[byte]int{}
	for k, e := range a.faults {
		if e.inLatest && e.Active {
			active[k.mid]++
		}
	}
	pids := map[byte]int{}
	for k := range a.latest {
		pids[byte(k>>16)]++
	}
	for mid := range a.mids {
		m := &a.mids[mid]
		if m.messages == 0 {
			continue
		}
		ms := MIDSummary{MID: mid, Name: MIDName(byte(mid)), Messages: m.messages, ChecksumBad: m.checksumBad,
			DecodeErrors: m.decodeErrors, J2497: m.j2497, First: m.first, Last: m.last, PIDs: pids[byte(mid)], ActiveFaults: active[byte(mid)]}
		if !m.faultTable.IsZero() {
			ft := m.faultTable
			ms.FaultTable = &ft
		}
		ms.RatePerSecond, ms.RateBasis, ms.RateNullReason = rate(m.messages, m.first, m.last)
		sum.MIDs = append(sum.MIDs, ms)
	}
	return sum
}

func (a *aggregate) parameters(mid int) []ParamValue {
	out := []ParamValue{}
	for k, l := range a.latest {
		m, pid := int(k>>16), uint16(k&0xFFFF)
		if mid != Any && m != mid {
			continue
		}
		v := Interpret(Param{PID: pid, Data: l.data})
		pv := ParamValue{MID: m, PID: int(pid), Name: v.Def.Name, Kind: v.Def.Kind.String(), Unit: v.Def.Unit,
			Status: v.Status.String(), Raw: hex.EncodeToString(l.data), Time: l.time, Count: l.count, J2497: l.j2497, NumberCount: l.numbers}
		if v.Status == StatusOK {
			x := v.Number
			pv.Value = &x
		}
		if l.numbers > 0 {
			lo, hi := l.min, l.max
			pv.Min, pv.Max = &lo, &hi
		}
		if v.UntrustedText() {
			pv.Text, pv.TextUntrusted = string(v.Text), true
		}
		out = append(out, pv)
	}
	slices.SortFunc(out, func(a, b ParamValue) int { return cmp.Or(cmp.Compare(a.MID, b.MID), cmp.Compare(a.PID, b.PID)) })
	return out
}

func (a *aggregate) faultList() []FaultEntry {
	out := []FaultEntry{}
	for k, e := range a.faults {
		fe := FaultEntry{MID: int(k.mid), MIDName: MIDName(k.mid), Code: int(k.code), IsSID: k.isSID, FMI: int(k.fmi),
			Active: e.inLatest && e.Active, Listed: e.inLatest, First: e.first, Last: e.last, Reports: e.reports}
		if !k.isSID {
			if d, ok := Lookup(k.code); ok {
				fe.CodeName = d.Name
			}
		}
		if e.HasCount {
			c := int(e.Count)
			fe.Count = &c
		}
		out = append(out, fe)
	}
	slices.SortFunc(out, func(a, b FaultEntry) int {
		if a.Listed != b.Listed {
			if a.Listed {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.MID, b.MID), cmp.Compare(a.Code, b.Code), cmp.Compare(a.FMI, b.FMI))
	})
	return out
}

func (a *aggregate) faultTables() map[int]time.Time {
	out := map[int]time.Time{}
	for mid := range a.mids {
		if t := a.mids[mid].faultTable; !t.IsZero() {
			out[mid] = t
		}
	}
	return out
}

// Summary counts the messages of every port, checksum errors and per-MID
// rates.
func (st *Store) Summary() Summary { return aggregateOf(st.Ports()...).summary() }

// Parameters returns the latest value per (MID, PID) over every port: the
// newest value, with the counts and range of all ports.
func (st *Store) Parameters(mid int) []ParamValue { return aggregateOf(st.Ports()...).parameters(mid) }

// Faults returns the fault entries of every port, merged per code.
func (st *Store) Faults() []FaultEntry { return aggregateOf(st.Ports()...).faultList() }

// FaultTables reports, per MID, the last PID 194 on any port.
func (st *Store) FaultTables() map[int]time.Time { return aggregateOf(st.Ports()...).faultTables() }

// MessageStats adds up the message rings of every port.
func (st *Store) MessageStats() ring.Stats { return aggregateOf(st.Ports()...).stored }
