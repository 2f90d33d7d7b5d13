package j1939

import "time"

// J1939-22 (J1939 on CAN FD) parameter groups. A Multi-PG frame carries
// one or more contained parameter groups (C-PGs), each behind a 4-byte
// header: TOS (type of service, 3 bits), TF (trailer format, 3 bits),
// the 18-bit CPGN, and the payload length. TOS 0 marks the rest of the
// frame as padding. The FD transport protocol (FD.TP) moves larger
// messages in its own CM and DT frames.
const (
	PGNMultiPG = 9472  // 0x2500, Multi-PG message
	PGNFDTPCM  = 19712 // 0x4D00, FD.TP connection management
	PGNFDTPDT  = 19968 // 0x4E00, FD.TP data transfer
)

// cpgHeader is a C-PG's header length.
const cpgHeader = 4

// MultiPGCounters count what the J1939-22 decoding saw and what it left
// undecoded: C-PGs with a trailer (TF not 0: a safety or security
// trailer whose layout is not decoded), Multi-PG frames whose C-PGs run
// past the frame (the C-PGs before the fault are decoded), and FD.TP
// frames, which are not reassembled.
type MultiPGCounters struct {
	Frames    uint64 // Multi-PG frames
	CPGs      uint64 // C-PGs decoded into messages
	Trailer   uint64 // C-PGs left undecoded: TF not 0
	Malformed uint64 // Multi-PG frames with a truncated C-PG
	FDTP      uint64 // FD.TP CM and DT frames, not reassembled
}

// multiPG delivers each C-PG of a Multi-PG frame from sa to da as a
// message of its CPGN, Via ViaMultiPG, as a single frame of that PGN
// would have been.
func (d *Decoder) multiPG(t time.Time, sa, da uint8, data []byte) {
	d.mpg.Frames++
	for len(data) > 0 {
		tos, tf := data[0]>>5, data[0]>>2&7
		if tos == 0 {
			return // padding to the end of the frame
		}
		if len(data) < cpgHeader || cpgHeader+int(data[3]) > len(data) {
			d.mpg.Malformed++
			return
		}
		pgn := uint32(data[0]&3)<<16 | uint32(data[1])<<8 | uint32(data[2])
		payload := data[cpgHeader : cpgHeader+int(data[3])]
		data = data[cpgHeader+len(payload):]
		if tf != 0 {
			d.mpg.Trailer++
			continue
		}
		d.mpg.CPGs++
		d.transfer(t, pgn, sa, da, payload, ViaMultiPG)
	}
}

// MultiPG returns the J1939-22 counters.
func (d *Decoder) MultiPG() MultiPGCounters { return d.mpg }
