package sipvcon

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzPartyOfHeader: any From or To value gives a party whose fields are
// valid UTF-8 within MaxPartyText (and its mark), never a panic.
func FuzzPartyOfHeader(f *testing.F) {
	for _, s := range []string{`"PCMU/8000" <sip:sipp@10.0.2.20:5060>;tag=1`, `<tel:+15551234;phone-context=x>`, `sips:a@h;tag=2`, `"\xff<" <sip:`, `<>`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		p := partyOfHeader(v)
		for _, s := range []string{p.SIP, p.Tel, p.Name} {
			if !utf8.ValidString(s) || len(s) > MaxPartyText+len("…") {
				t.Fatalf("party field %q", s)
			}
		}
		if _, err := json.Marshal(p); err != nil {
			t.Fatal(err)
		}
	})
}
