package j1708

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

func openRef(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(refdata.File(t, "j1708", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestVSpyImportReproducesReference reassembles the school bus export and
// checks PROVENANCE.md's answers, then that our log writer renders the
// same messages byte for byte as the reference .j1708 derived from it.
func TestVSpyImportReproducesReference(t *testing.T) {
	csvFile := openRef(t, "jdaily_VSpy_log_of_network_traffic.csv")
	var lines bytes.Buffer
	w := NewLogWriter(&lines)
	valid := 0
	st, err := ReadVSpy(csvFile, func(l wire.J1708Line) error {
		if Checksum(l.Data) {
			valid++
		}
		return w.Write(l.Time, l.J2497, l.Data)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if st.Rows != 10019 || st.Messages != 10018 || valid != 10008 {
		t.Errorf("rows/messages/valid = %d/%d/%d, want 10019/10018/10008", st.Rows, st.Messages, valid)
	}
	ref := bufio.NewScanner(openRef(t, "jdaily_schoolbus_vspy.j1708"))
	got := bufio.NewScanner(&lines)
	for n := 1; ref.Scan(); n++ {
		if !got.Scan() {
			t.Fatalf("import ended before reference line %d", n)
		}
		if got.Text() != ref.Text() {
			t.Fatalf("line %d = %q, want %q", n, got.Text(), ref.Text())
		}
	}
	if got.Scan() {
		t.Errorf("import has more lines than the reference: %q", got.Text())
	}
}

func TestVSpyRejectsOtherCSV(t *testing.T) {
	_, err := ReadVSpy(strings.NewReader("a,b\n1,2\n"), func(wire.J1708Line) error { return nil })
	if err == nil {
		t.Fatal("a CSV without the J1708 header was accepted")
	}
}

func TestLogLineRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		t     time.Time
		j2497 bool
		msg   []byte
		want  string
	}{
		{name: "j1708", t: time.Unix(1, 688000000), msg: []byte{0x80, 0xC2, 0x00, 0xBE}, want: "(1.688000) j1708 80C200BE\n"},
		{name: "j2497", t: time.Unix(0, 400000000), j2497: true, msg: []byte{0xC0, 0x11, 0xAB, 0x84}, want: "(0.400000) j2497 C011AB84\n"},
		{name: "microsecond rounding", t: time.Unix(596, 359813600), msg: []byte{0x80, 0x80}, want: "(596.359814) j1708 8080\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line := wire.AppendJ1708Line(nil, tc.t, tc.j2497, tc.msg)
			if string(line) != tc.want {
				t.Fatalf("line = %q, want %q", line, tc.want)
			}
			l, err := wire.ParseJ1708Line(line)
			if err != nil || !l.Time.Equal(tc.t.Round(time.Microsecond)) || l.J2497 != tc.j2497 || !bytes.Equal(l.Data, tc.msg) {
				t.Errorf("parsed back %+v, %v", l, err)
			}
		})
	}
}
