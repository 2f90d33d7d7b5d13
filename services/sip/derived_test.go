package sip

import (
	"fmt"
	"testing"
)

// TestDerivedKeptWithTheSnapshot: an answer is built once per key while
// its snapshot keeps it, the oldest of derivedKeys+1 keys is built
// again, and a changed store's new snapshot builds its own.
func TestDerivedKeptWithTheSnapshot(t *testing.T) {
	st := newStore(t, Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	var m Parsed
	addCallMessages(t, st, &m, 0, 0, 4)
	builds := map[string]int{}
	ask := func(sn *Snapshot, key string) any {
		return sn.Derived(key, func() any {
			builds[key]++
			return fmt.Sprintf("%s over %d dialogs at revision %d", key, len(sn.Dialogs), sn.Revision)
		})
	}
	sn := st.Snapshot()
	first := ask(sn, "a")
	if again := ask(st.Snapshot(), "a"); again != first || builds["a"] != 1 {
		t.Fatalf("a quiet store's snapshot built %q %d times (%q then %q)", "a", builds["a"], first, again)
	}
	for i := range derivedKeys {
		ask(sn, fmt.Sprint(i))
	}
	if ask(sn, "a"); builds["a"] != 2 {
		t.Fatalf("%q built %d times after %d other keys: want it dropped and built again", "a", builds["a"], derivedKeys)
	}
	if ask(sn, fmt.Sprint(derivedKeys-1)); builds[fmt.Sprint(derivedKeys-1)] != 1 {
		t.Fatal("the newest key was built again")
	}
	addCallMessages(t, st, &m, 1, 0, 4)
	if got := ask(st.Snapshot(), "a"); got == first || builds["a"] != 3 {
		t.Fatalf("after a change the store's snapshot answered %q (%d builds): want a new answer", got, builds["a"])
	}
}

// TestDerivedAtOnce: calls asking one snapshot for keys at once each get
// an answer for their key (run with -race).
func TestDerivedAtOnce(t *testing.T) {
	st := newStore(t, Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	var m Parsed
	addCallMessages(t, st, &m, 0, 0, 4)
	sn := st.Snapshot()
	errs := make(chan error, 16)
	for g := range 16 {
		go func() {
			key := fmt.Sprint(g % (derivedKeys + 2))
			got := sn.Derived(key, func() any { return "answer " + key })
			if got != "answer "+key {
				errs <- fmt.Errorf("key %s answered %v", key, got)
				return
			}
			errs <- nil
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
