package recorder

import (
	"time"
)

// batch is what the front has encoded since the last write: the writer
// folds it into the segment's index once its bytes are on disk, or counts
// its frames as not recorded when the write fails.
type batch struct {
	ifaceBase int          // interfaces declared before this batch
	ifaces    []batchIface // interface blocks inside the batch
	ports     []batchPort
	min, max  time.Time // frame times; zero when the batch holds none
}

type batchIface struct {
	port   string
	link   uint16
	offset int // within the batch
}

type batchPort struct {
	st     *portRec
	links  []uint16
	frames uint64
	bytes  uint64
	first  time.Time
	last   time.Time
}

func (b *batch) note(st *portRec, link uint16, t time.Time, n int) {
	if b.min.IsZero() || t.Before(b.min) {
		b.min = t
	}
	if t.After(b.max) {
		b.max = t
	}
	var p *batchPort
	for i := range b.ports {
		if b.ports[i].st == st {
			p = &b.ports[i]
			break
		}
	}
	if p == nil {
		b.ports = append(b.ports, batchPort{st: st, first: t, last: t})
		p = &b.ports[len(b.ports)-1]
	}
	p.frames++
	p.bytes += uint64(n)
	if t.Before(p.first) {
		p.first = t
	}
	if t.After(p.last) {
		p.last = t
	}
	for _, l := range p.links {
		if l == link {
			return
		}
	}
	p.links = append(p.links, link)
}

// fold adds the batch's frames to x.
func (b *batch) fold(x *Index) {
	for _, p := range b.ports {
		first, last := p.first, p.last
		x.Frames += p.frames
		if x.First == nil || first.Before(*x.First) {
			x.First = &first
		}
		if x.Last == nil || last.After(*x.Last) {
			x.Last = &last
		}
		i := -1
		for j := range x.Ports {
			if x.Ports[j].Port == p.st.name {
				i = j
				break
			}
		}
		if i < 0 {
			x.Ports = append(x.Ports, PortIndex{Port: p.st.name, First: first, Last: last})
			i = len(x.Ports) - 1
		}
		xp := &x.Ports[i]
		xp.Frames += p.frames
		xp.Bytes += p.bytes
		if first.Before(xp.First) {
			xp.First = first
		}
		if last.After(xp.Last) {
			xp.Last = last
		}
		for _, l := range p.links {
			if !containsLink(xp.Links, l) {
				xp.Links = append(xp.Links, l)
			}
		}
	}
}

func containsLink(ls []uint16, l uint16) bool {
	for _, v := range ls {
		if v == l {
			return true
		}
	}
	return false
}
