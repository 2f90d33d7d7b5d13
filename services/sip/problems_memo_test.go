package sip

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// scanProblems is find_problems' answer judged afresh, as it was before
// the memo: every alias against every record of d.
func scanProblems(d *Dialog, names []string) []string {
	compiled := CompiledProblems()
	hit := []string{}
	for _, n := range names {
		for _, r := range Records(d) {
			if compiled[n].Match(r) {
				hit = append(hit, n)
				break
			}
		}
	}
	return hit
}

// randomMessage is a message of one of calls Call-IDs (prefix and a
// number): INVITEs and their retransmissions, ringing, answers of every
// kind, ACK, CANCEL, BYE and its 200, REGISTER; cseq holds each call's
// CSeq.
func randomMessage(rng *rand.Rand, cseq map[string]int, prefix string, calls int) string {
	id := prefix + strconv.Itoa(rng.IntN(calls))
	n := cseq[id]
	switch k := rng.IntN(12); {
	case k < 3 || n == 0:
		n++
		cseq[id] = n
		return req("INVITE", id, n)
	case k == 3:
		return req("INVITE", id, n) // a retransmission
	case k == 4:
		return resp(180, "INVITE", id, n)
	case k == 5:
		return resp([]int{200, 486, 503, 401, 407, 487}[rng.IntN(6)], "INVITE", id, n)
	case k == 6:
		return req("ACK", id, n)
	case k == 7:
		return req("CANCEL", id, n)
	case k == 8:
		n++
		cseq[id] = n
		return req("BYE", id, n)
	case k == 9:
		return resp(200, "BYE", id, n)
	case k == 10:
		return req("REGISTER", id, n)
	}
	return resp(200, "INVITE", id, n)
}

// TestProblemMemoMatchesScan: on random stores (calls failing, ringing
// slowly, answered briefly, challenged, retransmitted, cancelled, under a
// dialog bound that evicts), with snapshots taken between the messages so
// that changed dialogs are copies of memoised ones, the memoised answer
// equals the fresh judgement for every dialog and every subset of
// aliases, asked from two goroutines at once.
func TestProblemMemoMatchesScan(t *testing.T) {
	all := ProblemNames()
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 39))
		st := newStore(t, Limits{Dialogs: 25})
		at := time.Unix(1000, 0)
		cseq := map[string]int{}
		matched := 0
		for i := range 1500 {
			at = at.Add(time.Duration(rng.IntN(4000)) * time.Millisecond)
			addRaw(t, st, at, randomMessage(rng, cseq, fmt.Sprintf("c%d-", seed), 60))
			if i%7 != 0 {
				continue
			}
			sn := st.Snapshot()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var bad []string
			for range 2 {
				wg.Go(func() {
					for _, d := range sn.Dialogs {
						want := scanProblems(d, all)
						if got := MatchProblems(d, all); !slices.Equal(got, want) {
							mu.Lock()
							bad = append(bad, fmt.Sprintf("%s: memo %v, scan %v", d.CallID, got, want))
							mu.Unlock()
						}
						for _, n := range all {
							one := []string{n}
							if got, want := AnyProblem(d, ProblemMask(one)), len(scanProblems(d, one)) > 0; got != want {
								mu.Lock()
								bad = append(bad, fmt.Sprintf("%s %s: memo %v, scan %v", d.CallID, n, got, want))
								mu.Unlock()
							}
						}
					}
				})
			}
			wg.Wait()
			if len(bad) > 0 {
				t.Fatalf("seed %d, message %d: %v", seed, i, bad)
			}
			for _, d := range sn.Dialogs {
				if len(MatchProblems(d, all)) > 0 {
					matched++
				}
			}
		}
		if sn := st.Snapshot(); sn.Stats.DialogsEvicted == 0 || matched == 0 {
			t.Fatalf("seed %d: %d evicted, %d problem dialogs seen: the store did not exercise eviction and problems", seed, sn.Stats.DialogsEvicted, matched)
		}
	}
}
