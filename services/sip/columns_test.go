package sip

import (
	"slices"
	"testing"
)

// columnsDialogs are dialogs whose columned fields take every shape a
// filter distinguishes: no final code, empty and non-ASCII users, a user
// that is another's prefix, and a long one.
func columnsDialogs() []*Dialog {
	codes := []int{0, 100, 200, 404, 486, 487, 503, 699}
	users := []string{"", "14", "1400", "1401", "2000", "alice", "Ålesund", "+14155550100", "14" + string(make([]byte, 300))}
	var ds []*Dialog
	for i := range 400 {
		ds = append(ds, &Dialog{ID: uint64(i + 1), FinalCode: codes[i%len(codes)], FromUser: users[i%len(users)], ToUser: users[(i/3)%len(users)],
			State: []string{StateEnded, StateFailed, StateCalling}[i%3]})
	}
	return ds
}

// roomySnapshot is a snapshot of ds with room for every column, as a
// store's has for its dialogs (siteColumns).
func roomySnapshot(ds []*Dialog) *Snapshot {
	sn := &Snapshot{Dialogs: ds}
	sn.site.share = 1 << 40
	return sn
}

// each is what Snapshot.Each visits, as dialog ids.
func each(t testing.TB, sn *Snapshot, src string) (ids []uint64, ok bool) {
	e, err := Compile(src)
	if err != nil {
		return nil, false
	}
	sn.Each(e, 0, func(id uint64, d *Dialog) {
		if id != d.ID {
			t.Fatalf("%s: Each visits dialog %d with id %d", src, d.ID, id)
		}
		ids = append(ids, id)
	})
	return ids, true
}

// byDialogs is the same filter evaluated on each dialog itself.
func byDialogs(sn *Snapshot, src string) []uint64 {
	e, _ := Compile(src)
	var ids []uint64
	for _, d := range sn.Dialogs {
		if e.Match(d) {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

func TestColumnsMatchAsTheDialogsDo(t *testing.T) {
	sn := roomySnapshot(columnsDialogs())
	if got, ok := each(t, sn, `final_code >= 400`); !ok || sn.cols == nil || !slices.Equal(got, byDialogs(sn, `final_code >= 400`)) {
		t.Fatal("the first filter on a snapshot did not build its columns, or they answered otherwise than the dialogs")
	}
	for _, src := range []string{
		`final_code >= 400 and from_user ~ "^14"`,
		`final_code == null`, `final_code != null and to_user == null`,
		`from_user == 1400 or to_user == alice`, `from_user != ""`,
		`from_user < "2" and to_user >= "alice"`, `to_user ~ "sund$"`, `from_user !~ "^1[0-9]+$"`,
		`not (final_code > 199 and final_code < 300)`, `from_user ~ "^\\+1"`,
		`state == failed and from_user ~ "^14"`, // reads a field the columns lack: the dialogs answer
	} {
		got, ok := each(t, sn, src)
		if !ok {
			t.Fatalf("%s does not compile", src)
		}
		if want := byDialogs(sn, src); !slices.Equal(got, want) {
			t.Errorf("%s: Each visits %d dialogs %v, the dialogs match %d %v", src, len(got), head(got), len(want), head(want))
		}
	}
	if sn.cols == nil || len(sn.cols.rows) != len(sn.Dialogs) {
		t.Fatal("the columns were not built for a filter reading only columned fields")
	}
}

func head(ids []uint64) []uint64 { return ids[:min(len(ids), 8)] }

// FuzzColumnsMatchAsTheDialogsDo: for any filter that compiles, the
// columns and the dialogs select the same dialogs.
func FuzzColumnsMatchAsTheDialogsDo(f *testing.F) {
	for _, s := range []string{`final_code >= 400 and from_user ~ "^14"`, `to_user == ""`, `not final_code == null or from_user > 2`, `has_ack`} {
		f.Add(s)
	}
	ds := columnsDialogs()
	f.Fuzz(func(t *testing.T, src string) {
		sn := roomySnapshot(ds)
		want := byDialogs(sn, src)
		for range 2 { // the first builds the columns, the second reads them
			got, ok := each(t, sn, src)
			if !ok {
				return
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q: Each visits %v, the dialogs match %v", src, head(got), head(want))
			}
		}
	})
}
