package obdgen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Identifiers of the session (ISO 15765-4).
const (
	Functional11 = 0x7DF
	Engine11     = 0x7E8 // the engine answers here; it is asked on 0x7E0
	Trans11      = 0x7E9 // the transmission answers here
	engineReq11  = 0x7E0
	Functional29 = 0x18DB33F1
	Engine29     = 0x18DAF110 // the engine's 29-bit answers
	engineReq29  = 0x18DA10F1
)

// What the car answers.
const (
	VIN               = "1FTEW1EP7KFA12345"
	CalID             = "JMB*36761500"
	CVN        uint32 = 0x1791BC82
	ECUName           = "ECM-EngineControl"
	ecuAcronym        = "ECM"
	// The refused request: mode 09 info type 0x0B on 0x7E0, answered
	// with NRC 0x31 (requestOutOfRange).
	RefusedMode = 0x09
	RefusedNRC  = 0x31
	// FreezeFrame is the frame number mode 02 asks for.
	FreezeFrame = 0
)

// Reading is one mode 01 parameter with its physical value.
type Reading struct {
	PID   uint8
	Value float64
}

// Readings are the engine's mode 01 values, chosen on the formulas' grids.
var Readings = []Reading{
	{0x04, 40}, {0x05, 83}, {0x06, -3.125}, {0x07, 1.5625}, {0x08, 0}, {0x09, -0.78125},
	{0x0B, 35}, {0x0C, 1726.5}, {0x0D, 50}, {0x0E, 12.5}, {0x0F, 28}, {0x10, 5.12}, {0x11, 20},
	{0x1F, 754}, {0x21, 0}, {0x2F, 60}, {0x31, 1234}, {0x33, 101}, {0x42, 14.2}, {0x46, 18},
	{0x5C, 92}, {0x5E, 2.45}, {0xA6, 45678.9},
}

// Freeze-frame engine speed, and the DTCs. DTC letters: P 00, C 01, B 10, U 11.
var (
	FreezeRPM   = 3000.0
	FreezeDTC   = "P0301"
	StoredDTCs  = []string{"P0301", "U0123"}
	PendingDTCs = []string{"P0420"}
	// PermanentDTCs is empty: the permanent-DTC answer has a count of 0.
	PermanentDTCs = []string{}
	Stored29DTCs  = []string{"P0171"}
)

// MILOn: PID 01 says the lamp is lit with len(StoredDTCs) codes.
const MILOn = true

// encode is the inverse of each public formula, to size bytes.
func encode(pid uint8, v float64) []byte {
	u := func(x float64, n int) []byte {
		r := uint64(math.Round(x))
		b := make([]byte, n)
		for i := range n {
			b[n-1-i] = byte(r >> (8 * i))
		}
		return b
	}
	switch pid {
	case 0x04, 0x11, 0x2F:
		return u(v*255/100, 1)
	case 0x05, 0x0F, 0x46, 0x5C:
		return u(v+40, 1)
	case 0x06, 0x07, 0x08, 0x09:
		return u(v*128/100+128, 1)
	case 0x0B, 0x0D, 0x33:
		return u(v, 1)
	case 0x0C:
		return u(v*4, 2)
	case 0x0E:
		return u((v+64)*2, 1)
	case 0x10:
		return u(v*100, 2)
	case 0x1F, 0x21, 0x31:
		return u(v, 2)
	case 0x42:
		return u(v*1000, 2)
	case 0x5E:
		return u(v*20, 2)
	case 0xA6:
		return u(v*10, 4)
	}
	panic(fmt.Sprintf("obdgen: no encoding for PID 0x%02X", pid))
}

// dtc is the two bytes of a code such as "P0301".
func dtc(s string) []byte {
	sys := map[byte]byte{'P': 0, 'C': 1, 'B': 2, 'U': 3}[s[0]]
	n, err := strconv.ParseUint(s[1:], 16, 16)
	if err != nil {
		panic(fmt.Sprintf("obdgen: DTC %q: %v", s, err))
	}
	return []byte{sys<<6 | byte(n>>8), byte(n)}
}

func dtcAnswer(mode byte, codes []string) []byte {
	out := []byte{mode + 0x40, byte(len(codes))}
	for _, c := range codes {
		out = append(out, dtc(c)...)
	}
	return out
}

// bitmap sets the bits of pids after base.
func bitmap(base uint8, pids ...uint8) []byte {
	b := make([]byte, 4)
	for _, p := range pids {
		i := p - base - 1
		b[i/8] |= 0x80 >> (i % 8)
	}
	return b
}

// padded is fixed-size text, NUL padded.
func padded(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	return b
}

// exchange is one request and its answers.
type exchange struct {
	reqID   uint32
	req     []byte
	answers []answer
}

type answer struct {
	id    uint32
	fcID  uint32 // where the tool sends flow control for a long answer
	bytes []byte
}

func pidAnswer(mode byte, pids ...uint8) []byte {
	out := []byte{mode + 0x40}
	for _, p := range pids {
		for _, r := range Readings {
			if r.PID == p {
				out = append(out, p)
				out = append(out, encode(p, r.Value)...)
			}
		}
	}
	return out
}

func session() []exchange {
	eng := func(b []byte) answer { return answer{Engine11, engineReq11, b} }
	eng29 := func(b []byte) answer { return answer{Engine29, engineReq29, b} }
	var ex []exchange
	ex = append(ex,
		exchange{Functional11, []byte{0x01, 0x00}, []answer{
			eng(append([]byte{0x41, 0x00}, bitmap(0x00, 0x01, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x1F, 0x20)...)),
			{Trans11, 0x7E1, append([]byte{0x41, 0x00}, bitmap(0x00, 0x01, 0x0D)...)}}},
		exchange{Functional11, []byte{0x01, 0x01}, []answer{
			eng([]byte{0x41, 0x01, 0x80 | byte(len(StoredDTCs)), 0x07, 0x65, 0x00})}},
	)
	// Mode 01 in groups of up to six PIDs, functional and physical by turns.
	for i := 0; i < len(Readings); i += 6 {
		var pids []uint8
		for _, r := range Readings[i:min(i+6, len(Readings))] {
			pids = append(pids, r.PID)
		}
		id := uint32(Functional11)
		if i/6%2 == 1 {
			id = engineReq11
		}
		ex = append(ex, exchange{id, append([]byte{0x01}, pids...), []answer{eng(pidAnswer(0x01, pids...))}})
	}
	ex = append(ex,
		exchange{Functional11, []byte{0x02, 0x02, FreezeFrame}, []answer{eng(append([]byte{0x42, 0x02, FreezeFrame}, dtc(FreezeDTC)...))}},
		exchange{Functional11, []byte{0x02, 0x0C, FreezeFrame}, []answer{eng(append([]byte{0x42, 0x0C, FreezeFrame}, encode(0x0C, FreezeRPM)...))}},
		exchange{Functional11, []byte{0x03}, []answer{eng(dtcAnswer(0x03, StoredDTCs)), {Trans11, 0x7E1, dtcAnswer(0x03, nil)}}},
		exchange{Functional11, []byte{0x07}, []answer{eng(dtcAnswer(0x07, PendingDTCs))}},
		exchange{Functional11, []byte{0x0A}, []answer{eng(dtcAnswer(0x0A, PermanentDTCs))}},
		exchange{Functional11, []byte{0x09, 0x00}, []answer{eng(append([]byte{0x49, 0x00}, bitmap(0x00, 0x02, 0x04, 0x06, 0x0A)...))}},
		exchange{Functional11, []byte{0x09, 0x02}, []answer{eng(append([]byte{0x49, 0x02, 0x01}, VIN...))}},
		exchange{engineReq11, []byte{0x09, 0x04}, []answer{eng(append([]byte{0x49, 0x04, 0x01}, padded(CalID, 16)...))}},
		exchange{engineReq11, []byte{0x09, 0x06}, []answer{eng(binary.BigEndian.AppendUint32([]byte{0x49, 0x06, 0x01}, CVN))}},
		exchange{engineReq11, []byte{0x09, 0x0A}, []answer{eng(append([]byte{0x49, 0x0A, 0x01}, padded(ecuAcronym+"\x00"+ECUName[len(ecuAcronym):], 20)...))}},
		exchange{engineReq11, []byte{RefusedMode, 0x0B}, []answer{eng([]byte{0x7F, RefusedMode, RefusedNRC})}},
		// The same engine on 29-bit ids.
		exchange{Functional29, []byte{0x01, 0x00}, []answer{eng29(append([]byte{0x41, 0x00}, bitmap(0x00, 0x0C, 0x0D)...))}},
		exchange{Functional29, []byte{0x01, 0x0D}, []answer{eng29(pidAnswer(0x01, 0x0D))}},
		exchange{engineReq29, []byte{0x09, 0x02}, []answer{eng29(append([]byte{0x49, 0x02, 0x01}, VIN...))}},
		exchange{Functional29, []byte{0x03}, []answer{eng29(dtcAnswer(0x03, Stored29DTCs))}},
	)
	return ex
}

// Exchanges is the number of requests the session makes.
func Exchanges() int { return len(session()) }

// Options select the session's start and the interface name.
type Options struct {
	Start     time.Time
	Interface string // "" => "can0"
}

// Frame is one CAN frame with its bus time.
type Frame struct {
	Time     time.Time
	ID       uint32 // without flags
	Extended bool
	Data     []byte // 8 bytes, padded
}

// Timing: an answer comes answerAfter the request, consecutive frames
// and flow control frameGap apart, the next request exchangeGap later.
const (
	answerAfter = 5 * time.Millisecond
	frameGap    = time.Millisecond
	exchangeGap = 100 * time.Millisecond
	pad         = 0x55
)

// Generate emits the session's frames in time order.
func Generate(o Options, emit func(Frame) error) error {
	t := o.Start
	send := func(id uint32, data []byte) error {
		f := Frame{Time: t, ID: id, Extended: id > 0x7FF, Data: make([]byte, 8)}
		for i := range f.Data {
			f.Data[i] = pad
		}
		copy(f.Data, data)
		t = t.Add(frameGap)
		return emit(f)
	}
	for _, ex := range session() {
		start := t
		if err := send(ex.reqID, append([]byte{byte(len(ex.req))}, ex.req...)); err != nil {
			return err
		}
		t = start.Add(answerAfter)
		for _, a := range ex.answers {
			if err := transfer(a, send); err != nil {
				return err
			}
		}
		t = start.Add(exchangeGap)
	}
	return nil
}

// transfer sends one answer as ISO-TP: a single frame, or a first frame,
// the tool's flow control (continue, no block limit, no separation time)
// and the consecutive frames.
func transfer(a answer, send func(uint32, []byte) error) error {
	b := a.bytes
	if len(b) <= 7 {
		return send(a.id, append([]byte{byte(len(b))}, b...))
	}
	if err := send(a.id, append([]byte{0x10 | byte(len(b)>>8), byte(len(b))}, b[:6]...)); err != nil {
		return err
	}
	if err := send(a.fcID, []byte{0x30, 0x00, 0x00}); err != nil {
		return err
	}
	for sn, i := 1, 6; i < len(b); sn, i = sn+1, i+7 {
		if err := send(a.id, append([]byte{0x20 | byte(sn&0x0F)}, b[i:min(i+7, len(b))]...)); err != nil {
			return err
		}
	}
	return nil
}

// WriteCandump writes the session to w in candump -l format.
func WriteCandump(w io.Writer, o Options) error {
	if o.Start.Before(time.Unix(0, 0)) {
		return fmt.Errorf("obdgen: start %v is before 1970, which candump cannot show", o.Start)
	}
	iface := o.Interface
	if iface == "" {
		iface = "can0"
	}
	bw := bufio.NewWriter(w)
	err := Generate(o, func(f Frame) error {
		us := f.Time.UnixMicro()
		var err error
		if f.Extended {
			_, err = fmt.Fprintf(bw, "(%d.%06d) %s %08X#%X\n", us/1e6, us%1e6, iface, f.ID, f.Data)
		} else {
			_, err = fmt.Fprintf(bw, "(%d.%06d) %s %03X#%X\n", us/1e6, us%1e6, iface, f.ID, f.Data)
		}
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
