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

// FuzzDecodeUDS decodes any answer to any request and reads the
// identifier of both: no input panics, and what the decoded answer and
// the identifiers say agrees with their bytes.
func FuzzDecodeUDS(f *testing.F) {
	addNissanExchanges(f)
	f.Add(ReadDataByID(0xF190), append([]byte{0x62, 0xF1, 0x90}, "1FUJGLDR9CLBP8834"...))
	f.Add(ReadDataByID(0xF190), []byte{0x7F, 0x22, 0x78})
	f.Add(SessionControl(3), []byte{0x50, 0x03, 0x00, 0x32, 0x01, 0xF4})
	f.Add(ReadDTC(DTCByMask, 0xFF), []byte{0x59, 0x02, 0xFF, 0x01, 0x23, 0x45, 0x09, 0xC0, 0x73, 0x00, 0x2F, 0x01})
	f.Add(ReadDTC(DTCCountByMask, 0x08), []byte{0x59, 0x01, 0xFF, 0x01, 0x00, 0x03})
	f.Add(TesterPresent(false), []byte{0x7E, 0x00})
	f.Add([]byte{0x22, 0xF1, 0x90, 0xF1, 0x8C, 0x01}, []byte{0x62, 0xF1, 0x90, 0x41})
	f.Add([]byte{0x31, 0x01, 0xFF, 0x00}, []byte{0x71, 0x01, 0xFF, 0x00, 0x00})
	f.Add([]byte{0x14, 0xFF, 0xFF, 0xFF}, []byte{0x54})
	f.Add([]byte{0x2E, 0xF1, 0x98, 0x00}, []byte{0x6E, 0xF1, 0x98})
	f.Fuzz(func(t *testing.T, req, resp []byte) {
		checkIdentify(t, req)
		checkIdentify(t, resp)
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

// checkIdentify holds Identify to its layouts: a kind with at least one
// value, each within its width, the first read from the bytes after the
// SID (after the sub-function for a routine), and a multi-DID read's
// DIDs all counted.
func checkIdentify(t *testing.T, pdu []byte) {
	id := Identify(pdu)
	if id.Kind == "" {
		if len(id.Values) != 0 || id.Dropped != 0 {
			t.Fatalf("% X: values %v without a kind", pdu, id.Values)
		}
		return
	}
	if len(id.Values) == 0 || len(id.Values) > MaxDIDs {
		t.Fatalf("% X: %d %s values", pdu, len(id.Values), id.Kind)
	}
	at := 1
	if id.Kind == KindRoutine {
		at = 2
	}
	n := id.Digits / 2
	want := fmt.Sprintf("0x%X", pdu[at:at+n])
	if id.Kind == KindReportType {
		want = Hex8(pdu[1] &^ suppressPositiveReply)
	}
	if got := id.Hex(id.Values[0]); got != want || len(got) != 2+id.Digits {
		t.Fatalf("% X: %s %s, want %s", pdu, id.Kind, got, want)
	}
	if pdu[0] == SIDReadDataByID && len(id.Values)+id.Dropped != (len(pdu)-1)/2 {
		t.Fatalf("% X: %d DIDs and %d dropped", pdu, len(id.Values), id.Dropped)
	}
}
