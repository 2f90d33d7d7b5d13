package j1939

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// The reference answers, as GROUND_TRUTH.json spells them.
type gtLog struct {
	File   string `json:"file"`
	Frames int    `json:"frames"`
	J1939  *struct {
		SAs            []int               `json:"source_addresses"`
		DistinctPGNs   int                 `json:"distinct_pgns"`
		PGNTop10       [][2]int            `json:"pgn_top10"`
		BAM            int                 `json:"tp_bam_sessions"`
		RTS            int                 `json:"tp_rts_sessions"`
		CTS            int                 `json:"tp_cts"`
		EoMA           int                 `json:"tp_eoma"`
		Abort          int                 `json:"tp_abort"`
		TransferTop10  [][2]int            `json:"tp_transfer_pgn_top10"`
		Complete       int                 `json:"tp_reassembled_complete"`
		CompleteBAM    int                 `json:"tp_reassembled_complete_bam"`
		CompleteRTS    int                 `json:"tp_reassembled_complete_rts"`
		Incomplete     int                 `json:"tp_incomplete_or_superseded"`
		Aborted        int                 `json:"tp_aborted_sessions"`
		Requests       int                 `json:"requests_pgn59904"`
		RequestedTop10 [][2]int            `json:"requested_pgns_top10"`
		ClaimFrames    int                 `json:"address_claim_frames"`
		Claims         map[string][]gtName `json:"address_claims"`
		DM1Messages    int                 `json:"dm1_messages"`
		DM1Direct      int                 `json:"dm1_direct"`
		DM1ViaTP       int                 `json:"dm1_via_tp"`
		DM1Sources     []int               `json:"dm1_sources"`
		DTCs           []gtDTC             `json:"dm1_dtcs"`
		IDStrings      [][4]any            `json:"identification_strings"`
	} `json:"j1939"`
}

type gtName struct {
	Identity int    `json:"identity_number"`
	Mfr      int    `json:"manufacturer_code"`
	Function int    `json:"function"`
	IndGroup int    `json:"industry_group"`
	AAC      int    `json:"arbitrary_address_capable"`
	Raw      string `json:"raw"`
}

type gtDTC struct {
	SA    int    `json:"sa"`
	SPN   int    `json:"spn"`
	FMI   int    `json:"fmi"`
	OC    int    `json:"oc"`
	CM    int    `json:"cm"`
	Via   string `json:"via"`
	Count int    `json:"count"`
}

// tally is what the test computes from the decoder's output.
type tally struct {
	sas        map[uint8]bool
	pgns       map[uint32]int
	transfer   map[uint32]int
	requested  map[uint32]int
	requests   int
	claims     map[string]bool // "sa/HEX"
	claimN     int
	dm1, dm1TP int
	dm1SA      map[uint8]bool
	dtcs       map[gtDTC]int
	idStrings  map[string]int // "sa/pgn/HEX"
}

// decodeFile runs every frame of a reference log through one Decoder per
// interface, as the daemon does per port.
func decodeFile(t *testing.T, path string) (tally, TPCounters, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ty := tally{sas: map[uint8]bool{}, pgns: map[uint32]int{}, transfer: map[uint32]int{}, requested: map[uint32]int{},
		claims: map[string]bool{}, dm1SA: map[uint8]bool{}, dtcs: map[gtDTC]int{}, idStrings: map[string]int{}}
	decs := map[string]*Decoder{}
	var sum TPCounters
	open := 0
	var dm DM
	onMsg := func(m *Message) {
		if m.Via == ViaDirect {
			ty.sas[m.ID.SA] = true
			ty.pgns[m.ID.PGN]++
		}
		switch m.ID.PGN {
		case PGNTPCM:
			if len(m.Data) >= 8 && (m.Data[0] == cmBAM || m.Data[0] == cmRTS) {
				ty.transfer[uint32(m.Data[5])|uint32(m.Data[6])<<8|uint32(m.Data[7])<<16]++
			}
		case PGNRequest:
			ty.requests++
			if pgn, ok := ParseRequest(m.Data); ok {
				ty.requested[pgn]++
			}
		case PGNAddressClaim:
			if n, ok := ParseName(m.Data); ok {
				ty.claimN++
				ty.claims[fmt.Sprintf("%d/%s", m.ID.SA, n.Hex)] = true
			}
		case PGNDM1:
			ty.dm1++
			if m.Via != ViaDirect {
				ty.dm1TP++
			}
			ty.dm1SA[m.ID.SA] = true
			ParseDM(m.Data, &dm)
			for _, d := range dm.DTCs {
				ty.dtcs[gtDTC{SA: int(m.ID.SA), SPN: int(d.SPN), FMI: int(d.FMI), OC: int(d.OC), CM: int(d.CM), Via: m.Via.String()}]++
			}
		case PGNVIN, PGNComponentID, PGNSoftwareID:
			if m.Via != ViaDirect {
				ty.idStrings[fmt.Sprintf("%d/%d/%X", m.ID.SA, m.ID.PGN, m.Data)]++
			}
		}
	}
	sc := bufio.NewScanner(f)
	var r wire.CandumpRecord
	for sc.Scan() {
		if wire.DecodeCandump(sc.Bytes(), &r) != nil || r.ID&(wire.CANRTR|wire.CANERR) != 0 {
			continue
		}
		d := decs[string(r.Interface)]
		if d == nil {
			d = NewDecoder()
			d.OnMessage = onMsg
			decs[string(r.Interface)] = d
		}
		d.Feed(r.Time, r.ID&wire.CANEFFMask, r.ID&wire.CANEFF != 0, r.Payload())
	}
	for _, d := range decs {
		c := d.TP()
		sum.BAM += c.BAM
		sum.RTS += c.RTS
		sum.CTS += c.CTS
		sum.EoMA += c.EoMA
		sum.Abort += c.Abort
		sum.Complete += c.Complete
		sum.CompleteBAM += c.CompleteBAM
		sum.CompleteRTS += c.CompleteRTS
		sum.Aborted += c.Aborted
		sum.TimedOut += c.TimedOut
		sum.Superseded += c.Superseded
		sum.Refused += c.Refused
		open += d.OpenCount()
	}
	return ty, sum, open
}

func top10[K comparable](m map[K]int, key func(K) int) [][2]int {
	var out [][2]int
	for k, v := range m {
		out = append(out, [2]int{key(k), v})
	}
	slices.SortFunc(out, func(a, b [2]int) int {
		if a[1] != b[1] {
			return b[1] - a[1]
		}
		return a[0] - b[0]
	})
	return out[:min(10, len(out))]
}

// groundTruth is GROUND_TRUTH.json's CAN logs and the folder they are in.
func groundTruth(t *testing.T) (dir string, logs []gtLog) {
	t.Helper()
	truthPath := refdata.File(t, "can", "GROUND_TRUTH.json")
	raw, err := os.ReadFile(truthPath)
	if err != nil {
		t.Fatal(err)
	}
	var gt struct {
		CanLogs []gtLog `json:"can_logs"`
	}
	if err := json.Unmarshal(raw, &gt); err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(truthPath), gt.CanLogs
}

// TestReferenceJ1939 reproduces every J1939 answer of GROUND_TRUTH.json.
func TestReferenceJ1939(t *testing.T) {
	dir, logs := groundTruth(t)
	checked := 0
	for _, want := range logs {
		if want.J1939 == nil {
			continue
		}
		t.Run(want.File, func(t *testing.T) {
			path := filepath.Join(dir, want.File)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s is listed but held back from the folder", want.File)
			}
			checked++
			w := want.J1939
			ty, tp, open := decodeFile(t, path)
			u8 := func(k uint8) int { return int(k) }
			u32 := func(k uint32) int { return int(k) }
			eq := func(what string, got, want any) {
				if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
					t.Errorf("%s = %s, want %s", what, g, w)
				}
			}
			sas := []int{}
			for sa := range ty.sas {
				sas = append(sas, int(sa))
			}
			slices.Sort(sas)
			eq("source addresses", sas, w.SAs)
			eq("distinct PGNs", len(ty.pgns), w.DistinctPGNs)
			eq("PGN top10", top10(ty.pgns, u32), w.PGNTop10)
			eq("TP.CM BAM/RTS/CTS/EoMA/Abort", []uint64{tp.BAM, tp.RTS, tp.CTS, tp.EoMA, tp.Abort}, []int{w.BAM, w.RTS, w.CTS, w.EoMA, w.Abort})
			eq("transfer PGN top10", top10(ty.transfer, u32), w.TransferTop10)
			eq("complete (all/BAM/RTS)", []uint64{tp.Complete, tp.CompleteBAM, tp.CompleteRTS}, []int{w.Complete, w.CompleteBAM, w.CompleteRTS})
			eq("aborted sessions", tp.Aborted, w.Aborted)
			eq("incomplete or superseded", int(tp.TimedOut+tp.Superseded+tp.Refused)+open, w.Incomplete)
			eq("requests", ty.requests, w.Requests)
			eq("requested PGN top10", top10(ty.requested, u32), w.RequestedTop10)
			eq("address claim frames", ty.claimN, w.ClaimFrames)
			var wantClaims []string
			for sa, names := range w.Claims {
				for _, n := range names {
					wantClaims = append(wantClaims, sa+"/"+n.Raw)
				}
			}
			gotClaims := []string{}
			for k := range ty.claims {
				gotClaims = append(gotClaims, k)
			}
			// GROUND_TRUTH lists at most a few NAMEs per SA.
			for _, c := range wantClaims {
				if !ty.claims[c] {
					t.Errorf("claim %s not seen", c)
				}
			}
			if len(wantClaims) > 0 && len(gotClaims) == 0 {
				t.Error("no claims decoded")
			}
			eq("DM1 messages (all/direct/TP)", []int{ty.dm1, ty.dm1 - ty.dm1TP, ty.dm1TP}, []int{w.DM1Messages, w.DM1Direct, w.DM1ViaTP})
			dm1SAs := []int{}
			for sa := range ty.dm1SA {
				dm1SAs = append(dm1SAs, u8(sa))
			}
			slices.Sort(dm1SAs)
			eq("DM1 sources", dm1SAs, w.DM1Sources)
			for _, d := range w.DTCs {
				n := d.Count
				d.Count = 0
				if got := ty.dtcs[d]; got != n {
					t.Errorf("DTC %+v seen %d times, want %d", d, got, n)
				}
				delete(ty.dtcs, d)
			}
			for d, n := range ty.dtcs {
				t.Errorf("unexpected DTC %+v ×%d", d, n)
			}
			for _, s := range w.IDStrings {
				sa, pgn, text, count := int(s[0].(float64)), int(s[1].(float64)), s[2].(string), int(s[3].(float64))
				_, hx, _ := strings.Cut(text, " hex=")
				key := strconv.Itoa(sa) + "/" + strconv.Itoa(pgn) + "/" + hx
				if got := ty.idStrings[key]; got != count {
					b, _ := hex.DecodeString(hx)
					t.Errorf("identification SA %d PGN %d %q seen %d times, want %d", sa, pgn, b, got, count)
				}
				delete(ty.idStrings, key)
			}
			for k, n := range ty.idStrings {
				t.Errorf("unexpected identification string %s ×%d", k, n)
			}
		})
	}
}
