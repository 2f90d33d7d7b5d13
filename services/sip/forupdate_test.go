package sip

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestForUpdateCopiesEveryField reads forUpdate's source: its Dialog
// literal and the assignments after it name every field of Dialog but
// the memo words, so a field added to Dialog and not to the copy fails
// here instead of vanishing from a dialog the store changes.
func TestForUpdateCopiesEveryField(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "store.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "forUpdate" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				got = append(got, n.Key.(*ast.Ident).Name)
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if s, ok := l.(*ast.SelectorExpr); ok {
						got = append(got, s.Sel.Name)
					}
				}
			}
			return true
		})
	}
	memo := []string{"figsRev", "figsWord", "figsDur", "figsPDD", "problems"}
	ty := reflect.TypeFor[Dialog]()
	for i := range ty.NumField() {
		name := ty.Field(i).Name
		if in := slices.Contains(got, name); in == slices.Contains(memo, name) {
			t.Errorf("Dialog.%s: copied by forUpdate %v, a memo word %v", name, in, !in)
		}
	}
}

// TestCopyWhileReadersMemoise adds messages to dialogs a snapshot holds
// while readers of that snapshot memoise its dialogs' problems and
// figures: the store's copy must not read the memo words the readers
// write (run with -race), and the snapshot's dialogs never change.
func TestCopyWhileReadersMemoise(t *testing.T) {
	st := newStore(t, Limits{})
	const calls = 50
	for i := range calls {
		fillCall(t, st, i, 0, 3) // INVITE, 100, 180 of each call
	}
	for round := range 4 {
		sn := st.Snapshot()
		before := make([]int, len(sn.Dialogs))
		for i, d := range sn.Dialogs {
			before[i] = d.MessagesKept
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, d := range sn.Dialogs {
				problemSet(d)
				d.memoFigures()
			}
		}()
		for i := range calls {
			fillCall(t, st, i, 3+round, 4+round)
		}
		<-done
		for i, d := range sn.Dialogs {
			if d.MessagesKept != before[i] {
				t.Fatalf("round %d: a snapshot's dialog changed under its reader: %d messages, was %d", round, d.MessagesKept, before[i])
			}
		}
	}
}

// fillCall adds messages [from, to) of ladder(i) to st.
func fillCall(t *testing.T, st *Store, i, from, to int) {
	t.Helper()
	var m Parsed
	src, dst := netip.MustParseAddrPort("192.0.2.1:5060"), netip.MustParseAddrPort("198.51.100.7:5060")
	for j, raw := range ladder(i)[from:to] {
		if err := m.Parse([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		st.Add(Meta{Time: time.Unix(1_700_000_000, int64(i*10+from+j)*int64(time.Millisecond)), Src: src, Dst: dst, Transport: TransportUDP}, &m, []byte(raw))
	}
}
