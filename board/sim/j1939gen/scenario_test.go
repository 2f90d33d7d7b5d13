package j1939gen

import (
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/ring"
)

// passes plays n passes of one run, as the sim board does, into a J1939
// store and a CAN port.
func passes(t *testing.T, o Options, n int) (*j1939.Store, *canbus.Port) {
	t.Helper()
	st, _ := j1939.New(j1939.Limits{})
	cs, _ := canbus.New(ring.Limits{Items: 1 << 20, Bytes: 64 << 20})
	port, err := cs.Port("can0", 0)
	if err != nil {
		t.Fatal(err)
	}
	start := o.Start
	for pass := range n {
		o.Pass, o.Start = int64(pass), start.Add(time.Duration(pass)*o.Duration)
		err := Generate(o, func(f Frame) error {
			port.Add(f.Time, f.ID|wire.CANEFF, f.Data)
			return st.Feed("can0", f.Time, f.ID, true, f.Data)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return st, port
}

// A truck keeps its NAMEs for the life of a run: twenty minute-long passes
// show each ECU one NAME and no address-claim conflict (the first version
// drew new NAMEs every pass: 18 conflicts per ECU after 19 minutes).
func TestNamesLastTheRun(t *testing.T) {
	st, _ := passes(t, Options{Seed: 1, Start: t0, Duration: time.Minute}, 20)
	claimed := 0
	for _, r := range st.Inventory() {
		if r.Conflicts != 0 || r.CannotClaim {
			t.Errorf("SA %#02x: %d conflicts, cannot claim %v", r.SA, r.Conflicts, r.CannotClaim)
		}
		if r.Claimed {
			claimed++
		}
	}
	if claimed != len(ecus) {
		t.Errorf("%d ECUs claimed, want %d", claimed, len(ecus))
	}
	var claims int
	for _, s := range st.Summary() {
		claims = s.AddressClaims
	}
	if claims != len(ecus) {
		t.Errorf("%d claims over 20 passes, want %d: ECUs claim once, at power-up", claims, len(ecus))
	}
}

func TestClaimConflictOnRequest(t *testing.T) {
	st, _ := passes(t, Options{Seed: 1, Start: t0, Duration: time.Minute, ClaimConflict: true}, 2)
	for _, r := range st.Inventory() {
		switch r.SA {
		case IntruderAddress:
			// The intruder's claim, then the body controller's answer:
			// each replaced the NAME held.
			if r.Conflicts != 2 || r.Name == nil || r.Name.Function != ecus[bodyIndex].function {
				t.Errorf("body controller %+v: want 2 conflicts and its own NAME back", r)
			}
		case nullAddress:
			if !r.CannotClaim || r.Name == nil || r.Name.Function != intruderFunc {
				t.Errorf("null address %+v: want the intruder's Cannot Claim", r)
			}
		default:
			if r.Conflicts != 0 {
				t.Errorf("SA %#02x: %d conflicts", r.SA, r.Conflicts)
			}
		}
	}
}

// The workshop session reads back through the passive UDS trace and the
// J1939 diagnostics view as the script wrote it.
func TestWorkshopSession(t *testing.T) {
	_, port := passes(t, Options{Seed: 2, Start: t0, Duration: time.Minute, Workshop: true}, 1)
	tr, err := isotp.TraceFrames("can0", port.Frames(), isotp.Window{}, isotp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := tr.UDS
	if u.Requests != WorkshopRequests || u.Negative != WorkshopNegative || u.Suppressed != WorkshopSuppressed ||
		u.Positive != WorkshopRequests-WorkshopNegative-WorkshopSuppressed || u.PendingAnswers != 1 || u.Unmatched != 0 {
		t.Errorf("UDS counters %+v", u)
	}
	c := tr.Transport.Counters
	if c.BadPCI != 0 || c.OrphanCF != 0 || c.UnmatchedFC != 0 || c.Notes != (isotp.Notes{}) || c.First != 3 {
		t.Errorf("transport %+v: want three clean multi-frame answers", c)
	}
	var vin, serial string
	for _, tx := range tr.Transactions {
		switch tx.DID {
		case "0xF190":
			vin = string(tx.Text)
		case "0xF18C":
			serial = string(tx.Text)
			if tx.Pending != 1 {
				t.Errorf("F18C %+v: want one pending answer", tx)
			}
		}
		if tx.Request == nil || tx.Request.Source == nil || *tx.Request.Source != ToolAddress || *tx.Request.Target != EngineAddress {
			t.Errorf("transaction %+v: not from the tool to the engine", tx)
		}
	}
	if vin != VIN || serial != ECUSerial {
		t.Errorf("VIN %q serial %q", vin, serial)
	}

	d := j1939.DiagnosticsOf("can0", port.Frames(), j1939.Window{}, nil)
	if len(d.Clears) != 1 {
		t.Fatalf("clears %+v", d.Clears)
	}
	cl := d.Clears[0]
	if cl.Kind != j1939.ClearDM11 || cl.Requester != ToolAddress || cl.Target != EngineAddress || cl.Name == nil ||
		len(cl.Acks) != 1 || cl.Acks[0].Control != "ack" || len(cl.Targets) != 1 {
		t.Fatalf("clear %+v", cl)
	}
	if tg := cl.Targets[0]; len(tg.Cleared) != 1 || tg.Cleared[0].SPN != FaultSPN || tg.After == nil || !tg.After.NoActive {
		t.Errorf("clear target %+v", tg)
	}
	var engine *j1939.SourceDMs
	for i := range d.Sources {
		if d.Sources[i].SA == EngineAddress {
			engine = &d.Sources[i]
		}
	}
	if engine == nil || engine.DM2 == nil || len(engine.DM2.DTCs) != 1 || engine.DM2.DTCs[0] != (j1939.DTC{SPN: PreviousSPN, FMI: PreviousFMI, OC: PreviousOccurrences}) {
		t.Errorf("engine lists %+v", engine)
	}
	// The fault leaves DM1 at the clear and comes back ReDetect later.
	var gone, back int
	for _, ch := range d.Changes {
		if ch.SA == EngineAddress && ch.List == "DM1" && ch.DTC.SPN == FaultSPN {
			if ch.Change == "gone" {
				gone++
			} else {
				back++
			}
		}
	}
	if gone != 1 || back != 2 { // appeared at the start, gone at the clear, back after ReDetect
		t.Errorf("DM1 fault gone %d, appeared %d", gone, back)
	}
}
