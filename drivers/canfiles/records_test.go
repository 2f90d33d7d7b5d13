package canfiles

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// read reads b with read, returning frames (copied) and reasons.
func read(t *testing.T, read Reader, b []byte) readResult {
	t.Helper()
	res := readResult{bad: map[string]int{}}
	err := read(bytes.NewReader(b), func(f *Frame) error {
		c := *f
		c.Data = append([]byte(nil), f.Data...)
		res.frames = append(res.frames, c)
		return nil
	}, func(_ int64, reason string, _ error) { res.bad[reason]++ })
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func checkBad(t *testing.T, got, want map[string]int) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("not read %v, want %v", got, want)
			return
		}
	}
	if len(got) != len(want) {
		t.Errorf("not read %v, want %v", got, want)
	}
}

// An ASC file as CANoe writes one, with the records fieldtap reads and
// those it counts.
const ascSample = "\ufeffdate Wed Jun 12 03:04:56.789 pm 2019\r\n" +
	"base hex  timestamps absolute\r\n" +
	"internal events logged\r\n" +
	"// version 13.0.0\r\n" +
	"Begin Triggerblock Wed Jun 12 03:04:56.789 pm 2019\r\n" +
	"   0.000000 Start of measurement\r\n" +
	"   0.001000 CAN 1 Status:chip status error active\r\n" +
	"   0.010000 1  18FECA00x       Rx   d 8 01 02 03 04 05 06 07 08  Length = 279910 BitCount = 144 ID = 419351040x\r\n" +
	"   0.020000 2  123             Tx   r 4\r\n" +
	"   0.030000 1  ErrorFrame\r\n" +
	"   0.040000 CANFD   1 Rx        7E8                                   0 0 8  8 02 41 0D 00 00 00 00 00   130000  130        0    0 0 0 0 0\r\n" +
	"   0.050000 CANFD   1 Rx        7E8                                   1 0 d 32 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f   130000  130     3000    0 0 0 0 0\r\n" +
	"   0.060000 1  7FF             Rx   d 8 01 02\r\n" +
	"   0.070000 1  800             Rx   d 1 01\r\n" +
	"   1.000000 1  Statistic: D 0 R 0 XD 0 XR 0 E 0 O 0 B 0.00%\r\n" +
	"End TriggerBlock\r\n"

func TestASCRecords(t *testing.T) {
	res := read(t, ReadASC, []byte(ascSample))
	start := time.Date(2019, 6, 12, 15, 4, 56, 789e6, time.UTC)
	want := []Frame{
		{Offset: 10 * time.Millisecond, ID: 0x18FECA00 | wire.CANEFF, DLC: 8, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}, Channel: 1},
		{Offset: 20 * time.Millisecond, ID: 0x123 | wire.CANRTR, DLC: 4, Data: []byte{}, Channel: 2},
		{Offset: 30 * time.Millisecond, ID: wire.CANERR, Data: []byte{}, Channel: 1},
		{Offset: 40 * time.Millisecond, ID: 0x7E8, DLC: 8, Data: []byte{2, 0x41, 0x0D, 0, 0, 0, 0, 0}, Channel: 1},
		{Offset: 50 * time.Millisecond, ID: 0x7E8, DLC: 13, Data: count(32), Channel: 1, Flags: wire.CANFDFDF | wire.CANFDBRS},
	}
	checkFrames(t, res.frames, want, start)
	// Start of measurement, chip status, statistic: other; a short data
	// field and an 11-bit id past 7FF: malformed.
	checkBad(t, res.bad, map[string]int{ReasonOther: 3, ReasonMalformed: 2})
}

func TestASCRelativeDecimal(t *testing.T) {
	res := read(t, ReadASC, []byte("date Mon Mär 04 13:00:00 2024\nbase dec  timestamps relative\n 0.5 1 100 Rx d 2 255 16\n 0.25 1 419351040x Rx d 0\n"))
	start := time.Date(2024, 3, 4, 13, 0, 0, 0, time.UTC)
	checkFrames(t, res.frames, []Frame{
		{Offset: 500 * time.Millisecond, ID: 100, DLC: 2, Data: []byte{255, 16}, Channel: 1},
		{Offset: 750 * time.Millisecond, ID: 0x18FECA00 | wire.CANEFF, Data: []byte{}, Channel: 1},
	}, start)
	checkBad(t, res.bad, nil)
}

// count is n bytes counting from 0.
func count(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func checkFrames(t *testing.T, got, want []Frame, start time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d frames %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		w.Time = start.Add(w.Offset)
		g := got[i]
		if !g.Time.Equal(w.Time) || g.Offset != w.Offset || g.ID != w.ID || g.DLC != w.DLC || !bytes.Equal(g.Data, w.Data) || g.Channel != w.Channel || g.Flags != w.Flags {
			t.Errorf("frame %d = %+v, want %+v", i, g, w)
		}
	}
}

const trc21Sample = ";$FILEVERSION=2.1\r\n" +
	";$STARTTIME=43628.6284\r\n" +
	";$COLUMNS=N,O,T,B,I,d,R,L,D\r\n" +
	";   Message   Time    Type    ID     Rx/Tx\r\n" +
	"      1      1059.900 DT  1     0300 Rx -  8    00 00 00 00 04 00 00 00\r\n" +
	"      2      1200.000 RR  2 18FECA00 Tx -  3\r\n" +
	"      3      1300.000 ER  1        - Rx -  5    04 00 00 08 00\r\n" +
	"      4      1400.000 FD  1     0301 Rx -  F    00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D 1E 1F 20 21 22 23 24 25 26 27 28 29 2A 2B 2C 2D 2E 2F 30 31 32 33 34 35 36 37 38 39 3A 3B 3C 3D 3E 3F\r\n" +
	"      5      1500.000 ST  1        - Rx -  4    00 00 00 08\r\n" +
	"      6      1600.000 DT  1     0300 Rx -  8    00 00\r\n" +
	"      7      1700.000 XX  1     0300 Rx -  0\r\n" +
	"      8      1800.000 BI  2 18FECA01 Rx -  9    00 01 02 03 04 05 06 07 08 09 0A 0B\r\n" +
	"      9      1900.000 FB  1     0302 Rx -  2    00 01\r\n" +
	"     10      2000.000 FE  1     0303 Rx -  A    00 01\r\n"

func TestTRCRecords(t *testing.T) {
	res := read(t, ReadTRC, []byte(trc21Sample))
	start := time.Date(2019, 6, 12, 15, 4, 53, 760e6, time.UTC) // 43628.6284 days
	checkFrames(t, res.frames, []Frame{
		{Offset: 1059900 * time.Microsecond, ID: 0x300, DLC: 8, Data: []byte{0, 0, 0, 0, 4, 0, 0, 0}, Channel: 1},
		{Offset: 1200 * time.Millisecond, ID: 0x18FECA00 | wire.CANEFF | wire.CANRTR, DLC: 3, Data: []byte{}, Channel: 2},
		{Offset: 1300 * time.Millisecond, ID: wire.CANERR, Data: []byte{}, Channel: 1},
		{Offset: 1400 * time.Millisecond, ID: 0x301, DLC: 15, Data: count(64), Channel: 1, Flags: wire.CANFDFDF},
		{Offset: 1800 * time.Millisecond, ID: 0x18FECA01 | wire.CANEFF, DLC: 9, Data: count(12), Channel: 2, Flags: wire.CANFDFDF | wire.CANFDBRS | wire.CANFDESI},
		{Offset: 1900 * time.Millisecond, ID: 0x302, DLC: 2, Data: count(2), Channel: 1, Flags: wire.CANFDFDF | wire.CANFDBRS},
	}, start)
	// The status line: other; a short data field, an unknown type and an
	// FD frame whose DLC codes 16 bytes with 2 written: malformed.
	checkBad(t, res.bad, map[string]int{ReasonOther: 1, ReasonMalformed: 3})
}

func TestTRC10(t *testing.T) {
	res := read(t, ReadTRC, []byte(";##########\n;   Start time: 12.06.2019\n     1)      1841  0001  8  00 00 00 00 00 00 00 00\n     2)      1842  FFFFFFFF  4  00 00 00 08  BUSHEAVY\n     3)      1900  00000123  2  RTR\n"))
	checkFrames(t, res.frames, []Frame{
		{Offset: 1841 * time.Millisecond, ID: 1, DLC: 8, Data: make([]byte, 8), Channel: 1},
		{Offset: 1900 * time.Millisecond, ID: 0x123 | wire.CANEFF | wire.CANRTR, DLC: 2, Data: []byte{}, Channel: 1},
	}, epoch)
	checkBad(t, res.bad, map[string]int{ReasonOther: 1})
}

func TestSavvyCSVRecords(t *testing.T) {
	res := read(t, ReadSavvyCSV, []byte("Time Stamp,ID,Extended,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8\n"+
		"166064000,0000021A,false,0,8,FE,36,12,FE,69,05,07,AD,\n"+
		"166065000,18FECA00,true,1,2,01,02,\n"+
		"166066000,00000123,false,0,12,00,01,02,03,04,05,06,07,08,09,0A,0B,\n"+
		"166067000,00000923,false,0,1,00,\n"))
	checkFrames(t, res.frames, []Frame{
		{Offset: 166064 * time.Millisecond, ID: 0x21A, DLC: 8, Data: []byte{0xFE, 0x36, 0x12, 0xFE, 0x69, 0x05, 0x07, 0xAD}, Channel: 0},
		{Offset: 166065 * time.Millisecond, ID: 0x18FECA00 | wire.CANEFF, DLC: 2, Data: []byte{1, 2}, Channel: 1},
		{Offset: 166066 * time.Millisecond, ID: 0x123, DLC: 9, Data: count(12), Flags: wire.CANFDFDF},
	}, epoch)
	checkBad(t, res.bad, map[string]int{ReasonMalformed: 1})
}

// blfObject lays out one object with a version 1 header.
func blfObject(typ uint32, ts uint64, body []byte) []byte {
	o := []byte("LOBJ")
	o = binary.LittleEndian.AppendUint16(o, 32)
	o = binary.LittleEndian.AppendUint16(o, 1)
	o = binary.LittleEndian.AppendUint32(o, uint32(32+len(body)))
	o = binary.LittleEndian.AppendUint32(o, typ)
	o = binary.LittleEndian.AppendUint32(o, 2)
	o = append(o, 0, 0, 0, 0)
	o = binary.LittleEndian.AppendUint64(o, ts)
	return append(append(o, body...), make([]byte, len(body)%4)...)
}

func blfContainer(method uint16, data []byte) []byte {
	payload := data
	if method == 2 {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		payload = z.Bytes()
	}
	o := []byte("LOBJ")
	o = binary.LittleEndian.AppendUint16(o, 16)
	o = binary.LittleEndian.AppendUint16(o, 1)
	o = binary.LittleEndian.AppendUint32(o, uint32(32+len(payload)))
	o = binary.LittleEndian.AppendUint32(o, 10)
	o = binary.LittleEndian.AppendUint16(o, method)
	o = append(o, 0, 0, 0, 0, 0, 0)
	o = binary.LittleEndian.AppendUint32(o, uint32(len(data)))
	o = append(o, 0, 0, 0, 0)
	o = append(o, payload...)
	return append(o, make([]byte, (32+len(payload))%4)...)
}

// TestBLFRecords builds a BLF file object by object: frames split across
// two compressed containers, an uncompressed one, a CAN FD frame, an
// error frame, an unknown object, a container that does not decompress.
func TestBLFRecords(t *testing.T) {
	start := time.Date(2024, 1, 2, 3, 4, 5, 6e6, time.UTC)
	file := appendSystemTime(t, start)
	can := func(ch uint16, flags, dlc byte, id uint32, data ...byte) []byte {
		b := binary.LittleEndian.AppendUint16(nil, ch)
		b = append(b, flags, dlc)
		b = binary.LittleEndian.AppendUint32(b, id)
		return append(b, append(data, make([]byte, 8-len(data))...)...)
	}
	fd := make([]byte, 84)
	fd[0], fd[3], fd[13], fd[14] = 1, 15, 1|4, 64 // EDL, ESI, 64 bytes
	copy(fd[20:], count(64))
	errExt := make([]byte, 32)
	errExt[0] = 2
	var stream []byte
	stream = append(stream, blfObject(1, 1000, can(1, 0, 2, 0x80000000|0x18FECA00, 0xAA, 0xBB))...)
	stream = append(stream, blfObject(100, 2000, fd)...)
	stream = append(stream, blfObject(73, 3000, errExt)...)
	stream = append(stream, blfObject(65, 4000, []byte("text"))...) // APP_TEXT
	stream = append(stream, blfObject(86, 5000, can(2, 0x80, 3, 0x123))...)
	cut := len(stream) - 20 // the last object runs into the next container
	file = append(file, blfContainer(2, stream[:cut])...)
	file = append(file, blfContainer(0, stream[cut:])...)
	bad := blfContainer(2, blfObject(1, 6000, can(1, 0, 1, 0x7FF, 1)))
	bad[40] ^= 0xFF // damage the compressed bytes
	file = append(file, bad...)
	file = append(file, blfContainer(2, blfObject(1, 7000, can(1, 0, 1, 0x7FF, 9)))...)

	res := read(t, ReadBLF, file)
	checkFrames(t, res.frames, []Frame{
		{Offset: 1000, ID: 0x18FECA00 | wire.CANEFF, DLC: 2, Data: []byte{0xAA, 0xBB}, Channel: 1},
		{Offset: 2000, DLC: 15, Data: count(64), Channel: 1, Flags: wire.CANFDFDF | wire.CANFDESI},
		{Offset: 3000, ID: wire.CANERR, Data: []byte{}, Channel: 2},
		{Offset: 5000, ID: 0x123 | wire.CANRTR, DLC: 3, Data: []byte{}, Channel: 2},
		{Offset: 7000, ID: 0x7FF, DLC: 1, Data: []byte{9}, Channel: 1},
	}, start)
	checkBad(t, res.bad, map[string]int{ReasonOther: 1, ReasonContainer: 1})

	// A file cut short and garbage between objects are counted, not fatal.
	res = read(t, ReadBLF, append(append(file[:len(file):len(file)], "garbage!"...), file[144:144+30]...))
	if len(res.frames) != 5 || res.bad[ReasonMalformed] == 0 {
		t.Errorf("damaged tail: %d frames, not read %v", len(res.frames), res.bad)
	}
	if err := ReadBLF(strings.NewReader("LOGX"), func(*Frame) error { return nil }, func(int64, string, error) {}); err == nil {
		t.Error("a file without LOGG must be refused")
	}
}

// appendSystemTime is a BLF file header starting at start.
func appendSystemTime(t testing.TB, start time.Time) []byte {
	h := []byte("LOGG")
	h = binary.LittleEndian.AppendUint32(h, 144)
	h = append(h, make([]byte, 32)...)
	for _, v := range []int{start.Year(), int(start.Month()), 0, start.Day(), start.Hour(), start.Minute(), start.Second(), start.Nanosecond() / 1e6} {
		h = binary.LittleEndian.AppendUint16(h, uint16(v))
	}
	return append(h, make([]byte, 144-len(h))...)
}
