package obd

import (
	"encoding/hex"
	"math"
	"slices"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Values worked out by hand from the bytes with the formulas of the
// Wikipedia article "OBD-II PIDs", the ones python-OBD's obd/decoders.py
// (github.com/brendan-w/python-OBD at 3cb7b2a4: percent, percent_centered,
// temp, parse_dtc) implements: 0x1AF8/4 = 1726 rpm, 0x7B-40 = 83 °C, 0x33*100/255 = 20 %,
// (0x7C-128)*100/128 = -3.125 %, 0x0006F855/10 = 45678.9 km.
func TestDecodeByHand(t *testing.T) {
	num := func(f float64) *float64 { return &f }
	cases := []struct {
		name string
		resp string
		want []Value
	}{
		{"rpm", "410C1AF8", []Value{{PID: "0x0C", Name: "engine speed", Unit: "rpm", Value: num(1726), Raw: "1AF8"}}},
		{"three PIDs in one answer", "41057B1133067C", []Value{
			{PID: "0x05", Name: "engine coolant temperature", Unit: "°C", Value: num(83), Raw: "7B"},
			{PID: "0x11", Name: "throttle position", Unit: "%", Value: num(20), Raw: "33"},
			{PID: "0x06", Name: "short term fuel trim bank 1", Unit: "%", Value: num(-3.125), Raw: "7C"}}},
		{"odometer", "41A60006F855", []Value{{PID: "0xA6", Name: "odometer", Unit: "km", Value: num(45678.9), Raw: "0006F855"}}},
		{"monitor status", "410183076500", []Value{{PID: "0x01", Name: "monitor status since DTCs cleared", Unit: "DTCs", Value: num(3), State: "MIL on", Raw: "83076500"}}},
		{"unknown PID keeps its bytes", "41FF0102", []Value{{PID: "0xFF", Raw: "0102"}}},
		{"supported bitmap", "4100BE1FA813", []Value{{PID: "0x00", Name: "PIDs supported", Raw: "BE1FA813", Supported: []string{
			"0x01", "0x03", "0x04", "0x05", "0x06", "0x07", "0x0C", "0x0D", "0x0E", "0x0F", "0x10", "0x11", "0x13", "0x15", "0x1C", "0x1F", "0x20"}}}},
		{"freeze frame", "42020103010C010FA0", []Value{
			{PID: "0x02", Frame: new(1), Name: "DTC that caused the freeze frame", Code: "P0301", Raw: "0301"},
			{PID: "0x0C", Frame: new(1), Name: "engine speed", Unit: "rpm", Value: num(1000), Raw: "0FA0"}}},
		{"stored DTCs", "430301334123C001", []Value{
			{Name: "stored DTC count", Value: num(3), Raw: "03"},
			{Name: "stored DTC", Code: "P0133", Raw: "0133"},
			{Name: "stored DTC", Code: "C0123", Raw: "4123"},
			{Name: "stored DTC", Code: "U0001", Raw: "C001"}}},
		{"pending, padding skipped", "4702B0010000", []Value{
			{Name: "pending DTC count", Value: num(2), Raw: "02"},
			{Name: "pending DTC", Code: "B3001", Raw: "B001"}}},
		{"VIN", "490201" + hex.EncodeToString([]byte("1FTEW1EP7KFA12345")), []Value{
			{PID: "0x02", Name: "VIN", Text: "1FTEW1EP7KFA12345", Raw: "3146544557314550374B46413132333435"}}},
		{"two CVNs", "4906021791BC82AABBCCDD", []Value{
			{PID: "0x06", Name: "calibration verification number", Code: "1791BC82", Raw: "1791BC82"},
			{PID: "0x06", Name: "calibration verification number", Code: "AABBCCDD", Raw: "AABBCCDD"}}},
	}
	for _, c := range cases {
		got := Decode(unhex(t, c.resp))
		if got.Problem != "" && c.name != "pending, padding skipped" {
			t.Errorf("%s: problem %q", c.name, got.Problem)
		}
		if !slices.EqualFunc(got.Values, c.want, sameValue) {
			t.Errorf("%s: %s\n got %+v\nwant %+v", c.name, c.resp, got.Values, c.want)
		}
	}
}

func sameValue(a, b Value) bool {
	if (a.Value == nil) != (b.Value == nil) || a.Value != nil && math.Abs(*a.Value-*b.Value) > 1e-9 {
		return false
	}
	if (a.Frame == nil) != (b.Frame == nil) || a.Frame != nil && *a.Frame != *b.Frame {
		return false
	}
	return a.PID == b.PID && a.Name == b.Name && a.Unit == b.Unit && a.State == b.State && a.Text == b.Text &&
		a.Code == b.Code && a.Raw == b.Raw && slices.Equal(a.Supported, b.Supported)
}

func TestDecodeRefusals(t *testing.T) {
	neg := Decode(unhex(t, "7F0931"))
	if neg.Mode != 0x09 || neg.NRC != "0x31" || neg.NRCName != "requestOutOfRange" || len(neg.Values) != 0 {
		t.Errorf("negative response %+v", neg)
	}
	for resp, want := range map[string]string{
		"":         "empty answer",
		"7F09":     "negative response of 2 bytes, want 3",
		"0100":     "first byte 0x01 is not an answer (mode + 0x40 or 0x7F)",
		"410C1A":   "PID 0x0C (engine speed) has 1 data bytes, want 2",
		"42":       "answer without a PID",
		"420C":     "PID 0x0C without its freeze frame number",
		"4302":     "DTC count 2 but 0 code bytes",
		"490202":   "information type 0x02: 2 items of 17 bytes announced, 0 bytes sent",
		"460100":   "mode 0x06 is not decoded",
		"490000FF": "supported bitmap of 2 bytes, want 4",
	} {
		if got := Decode(unhex(t, resp)); got.Problem != want {
			t.Errorf("%q: problem %q, want %q", resp, got.Problem, want)
		}
	}
}

func TestDecodeBoundsValues(t *testing.T) {
	resp := []byte{0x43, 0xFF}
	for i := range 0xFF {
		resp = append(resp, 0x01, byte(i+1))
	}
	got := Decode(resp)
	if len(got.Values) != MaxValues || got.Dropped != 0xFF+1-MaxValues {
		t.Errorf("%d values, %d dropped; want %d and %d", len(got.Values), got.Dropped, MaxValues, 0xFF+1-MaxValues)
	}
}

func TestIDs(t *testing.T) {
	const eff = 1 << 31
	for id, want := range map[uint32][2]bool{
		0x7DF: {true, false}, 0x7E0: {true, false}, 0x7E7: {true, false}, 0x7E8: {false, true}, 0x7EF: {false, true},
		0x7F0: {false, false}, 0x79B: {false, false}, 0x18DB33F1 | eff: {true, false}, 0x18DA10F1 | eff: {true, false},
		0x18DAF110 | eff: {false, true}, 0x18DAF910 | eff: {false, false}, 0x18DB33F1: {false, false},
	} {
		if got := [2]bool{IsRequestID(id), IsResponseID(id)}; got != want {
			t.Errorf("%#x: request, response = %v, want %v", id, got, want)
		}
	}
}

// FuzzDecode: no answer makes Decode panic, every value keeps raw bytes
// that were in the answer, and the bound holds.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"410C1AF8", "41057B1133067C", "42020103010C010FA0", "430301334123C001", "4906021791BC82AABBCCDD",
		"490A0145434D002D456E67696E65436F6E74726F6C0000", "4100BE1FA813", "7F0931", "4A00", "41FF"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a := Decode(b)
		if len(a.Values) > MaxValues {
			t.Fatalf("%d values", len(a.Values))
		}
		for _, v := range a.Values {
			if len(v.Raw) > 2*len(b) {
				t.Fatalf("raw %s longer than the answer %X", v.Raw, b)
			}
		}
	})
}
