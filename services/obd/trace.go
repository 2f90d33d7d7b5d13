package obd

import (
	"encoding/hex"
	"strconv"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
)

// Item is one decoded value of one answer of an overheard exchange.
type Item struct {
	// Time is the answer's first frame; ECU the CAN id it came from, and
	// Tester the request's (empty when the request was not seen).
	Time   time.Time
	ECU    string
	Tester string
	Mode   byte
	// Answer and Index place the item: the answer's place among the
	// transaction's answers, and the value's in the answer.
	Answer, Index int
	Value
	NRC, NRCName, Problem string
}

// Exchange is what one OBD transaction says.
type Exchange struct {
	Items []Item
	// Dropped counts values past MaxValues, across the answers.
	Dropped int
	// Unanswered: no answer came (the request is all there is).
	Unanswered bool
}

// IsOBD reports whether tx is an OBD exchange: its service is a mode this
// package decodes and it went between OBD ids (ISO 15765-4): a request on
// a tester's id, or an answer on an ECU's. A manufacturer's ECU on
// another id asking the same service number is not OBD.
func IsOBD(tx *isotp.Transaction) bool {
	if !IsMode(tx.SID) {
		return false
	}
	if tx.Request != nil {
		return IsRequestID(parseID(tx.Request.CANID))
	}
	for _, a := range tx.Responses {
		if IsResponseID(parseID(a.CANID)) {
			return true
		}
	}
	return false
}

// parseID reads wire.FormatCANID's spelling back: 8 digits are a 29-bit id.
func parseID(s string) uint32 {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0
	}
	if len(s) > 3 {
		return uint32(v) | wire.CANEFF
	}
	return uint32(v)
}

// decode reads every final answer of tx (an answer asking for more time,
// NRC 0x78, says nothing yet). tx must be an OBD exchange (IsOBD).
func (x *Exchange) decode(tx *isotp.Transaction) {
	tester := ""
	if tx.Request != nil {
		tester = tx.Request.CANID
	}
	answered := false
	for i, a := range tx.Responses {
		if a.Pending {
			continue
		}
		answered = true
		base := Item{Time: a.Time, ECU: a.CANID, Tester: tester, Mode: tx.SID, Answer: i}
		raw, err := hex.DecodeString(a.Data)
		switch {
		case err != nil:
			base.Problem = "the answer's bytes are not hex: " + err.Error()
			x.Items = append(x.Items, base)
			continue
		case a.Truncated:
			base.Problem = "the answer is longer than the bytes kept (" + strconv.Itoa(isotp.MaxShownBytes) + "); its end is not decoded"
		}
		ans := Decode(raw)
		x.Dropped += ans.Dropped
		if ans.Problem != "" {
			base.Problem = ans.Problem
		}
		base.NRC, base.NRCName = ans.NRC, ans.NRCName
		if len(ans.Values) == 0 {
			x.Items = append(x.Items, base)
			continue
		}
		for j, v := range ans.Values {
			it := base
			it.Index, it.Value = j, v
			x.Items = append(x.Items, it)
		}
	}
	x.Unanswered = !answered
}

// Read decodes tx when it is an OBD exchange.
func Read(tx *isotp.Transaction) (Exchange, bool) {
	if !IsOBD(tx) {
		return Exchange{}, false
	}
	var x Exchange
	x.decode(tx)
	return x, true
}
