package mcp

import (
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ports"
	"fieldtap/services/ring"
)

// TestCANFDColumns stores classic and CAN FD frames as feedCAN does and
// reads them back through can_frames, can_ids, can_buses and
// export_canlog: FD flags, DLC against length, the whole 64 bytes.
func TestCANFDColumns(t *testing.T) {
	cs, err := canbus.New(ring.Limits{Items: 100, Bytes: 100 * canbus.FDFrameBytes()})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := cs.Port("can0", 0)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	long := make([]byte, 64)
	for i := range long {
		long[i] = byte(i)
	}
	p.AddFrame(t0, 0x123, 0, []byte{1, 2})
	p.AddFrame(t0.Add(time.Millisecond), 0x123, wire.CANFDFDF|wire.CANFDBRS, long)
	p.AddFrame(t0.Add(2*time.Millisecond), 0x123, wire.CANFDFDF|wire.CANFDESI, long[:12])
	d := withPorts(testDeps(), fakePorts{ports.Status{Name: "can0", Kind: "can", Live: true}})
	d.CAN = cs
	c := newChecker(t, testServer(t, d, canFrames, canIDs, canBuses, exportCANLog))

	r0, env := c.call("can_frames", map[string]any{})
	if r0.IsError {
		t.Fatal(r0.Content[0].Text)
	}
	items := env["items"].([]any)
	if len(items) != 3 {
		t.Fatalf("can_frames: %d rows, want 3", len(items))
	}
	for i, want := range []struct {
		fd, brs, esi bool
		dlc, length  float64
		data         string
	}{
		{false, false, false, 2, 2, "0102"},
		{true, true, false, 15, 64, strings.ToUpper(hexString(long))},
		{true, false, true, 9, 12, strings.ToUpper(hexString(long[:12]))},
	} {
		r := items[i].(map[string]any)
		if r["fd"] != want.fd || r["brs"] != want.brs || r["esi"] != want.esi || r["dlc"] != want.dlc || r["length"] != want.length || r["data"] != want.data {
			t.Errorf("can_frames row %d: %v, want %+v", i, r, want)
		}
	}

	_, env = c.call("can_ids", map[string]any{})
	row := env["items"].([]any)[0].(map[string]any)
	if row["fd_frames"] != 2.0 || row["brs_frames"] != 1.0 || row["esi_frames"] != 1.0 || row["count"] != 3.0 ||
		!sameInts(row["lengths"], 2, 64, 12) || !sameInts(row["dlcs"], 2, 15, 9) || row["last_data"] != strings.ToUpper(hexString(long[:12])) {
		t.Errorf("can_ids row %v", row)
	}

	_, env = c.call("can_buses", map[string]any{})
	if bus := env["data"].(map[string]any)["buses"].([]any)[0].(map[string]any); bus["fd_frames"] != 2.0 {
		t.Errorf("can_buses: %v", bus)
	}

	_, env = c.call("export_canlog", map[string]any{})
	got := env["data"].(map[string]any)["exports"].([]any)[0].(map[string]any)["candump"]
	want := "(1772323200.000000) can0 123#0102\n" +
		"(1772323200.001000) can0 123##1" + strings.ToUpper(hexString(long)) + "\n" +
		"(1772323200.002000) can0 123##2" + strings.ToUpper(hexString(long[:12])) + "\n"
	if got != want {
		t.Errorf("export_canlog:\n%s\nwant\n%s", got, want)
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&0xF])
	}
	return s.String()
}

func sameInts(v any, want ...int) bool {
	got, ok := v.([]any)
	if !ok || len(got) != len(want) {
		return false
	}
	for i, w := range want {
		if got[i] != float64(w) {
			return false
		}
	}
	return true
}
