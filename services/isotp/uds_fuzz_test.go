package isotp

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// udsSeedLines bounds how much of the reference log seeds the corpus: the
// first exchanges hold both request kinds and their long answers.
const udsSeedLines = 400

// addNissanExchanges seeds f with the UDS requests (0x79B) and answers
// (0x7BB) of the Nissan Leaf log, reassembled by ISO-TP (none without
// ../shared/testdata).
func addNissanExchanges(f *testing.F) {
	fh, err := os.Open(refdata.Path(f, "can", "css_uds_nissan_leaf_2F6913DB.log"))
	if err != nil {
		return
	}
	defer fh.Close()
	var reqR, respR Reassembler
	var req []byte
	sc := bufio.NewScanner(fh)
	for n := 0; sc.Scan() && n < udsSeedLines; n++ {
		var rec wire.CandumpRecord
		if wire.DecodeCandump(sc.Bytes(), &rec) != nil {
			continue
		}
		var r *Reassembler
		switch rec.ID {
		case 0x79B:
			r = &reqR
		case 0x7BB:
			r = &respR
		default:
			continue
		}
		res, err := r.Feed(rec.Payload())
		if err != nil || res.Payload == nil {
			continue
		}
		if r == &reqR {
			req = res.Payload
		} else if req != nil {
			f.Add(req, res.Payload)
		}
	}
}

// FuzzDecodeUDS decodes any answer to any request: no input panics, and
// what the decoded answer says agrees with its bytes.
func FuzzDecodeUDS(f *testing.F) {
	addNissanExchanges(f)
	f.Add(ReadDataByID(0xF190), append([]byte{0x62, 0xF1, 0x90}, "1FUJGLDR9CLBP8834"...))
	f.Add(ReadDataByID(0xF190), []byte{0x7F, 0x22, 0x78})
	f.Add(SessionControl(3), []byte{0x50, 0x03, 0x00, 0x32, 0x01, 0xF4})
	f.Add(ReadDTC(DTCByMask, 0xFF), []byte{0x59, 0x02, 0xFF, 0x01, 0x23, 0x45, 0x09, 0xC0, 0x73, 0x00, 0x2F, 0x01})
	f.Add(ReadDTC(DTCCountByMask, 0x08), []byte{0x59, 0x01, 0xFF, 0x01, 0x00, 0x03})
	f.Add(TesterPresent(false), []byte{0x7E, 0x00})
	f.Fuzz(func(t *testing.T, req, resp []byte) {
		r := Decode(req, resp)
		if r.Raw != strings.ToUpper(fmt.Sprintf("%x", resp)) {
			t.Fatalf("raw %q for %X", r.Raw, resp)
		}
		if r.Positive && (len(req) == 0 || resp[0] != req[0]+positiveOffset) {
			t.Fatalf("positive answer %X to request %X", resp, req)
		}
		if r.NRC != "" && (r.Positive || resp[0] != SIDNegative) {
			t.Fatalf("an NRC on %X", resp)
		}
		if r.DataText != "" {
			if !utf8.ValidString(r.DataText) || !printable([]byte(r.DataText)) || !bytes.HasSuffix(resp, []byte(r.DataText)) {
				t.Fatalf("data text %q from %X", r.DataText, resp)
			}
		}
		if r.DTCs != nil && (r.DTCCount == nil || *r.DTCCount != len(r.DTCs)) {
			t.Fatalf("%d DTCs counted as %v", len(r.DTCs), r.DTCCount)
		}
	})
}
