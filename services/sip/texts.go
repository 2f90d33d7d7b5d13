package sip

// Bounds on sharedTexts: the first maxSharedTexts distinct values of at
// most maxSharedText bytes are shared, about 64 KiB at most, the size of
// the interned method names'; the rest are copied per dialog as before.
const (
	maxSharedTexts = 256
	maxSharedText  = 128
)

// sharedTexts keeps one copy of the sender text that dialogs repeat:
// reason phrases ("OK", "Ringing") and User-Agent and Server values, the
// same few on every call of a site. A string per dialog for them was
// about a tenth of what a call's dialog updates allocated. A dialog is
// still charged each one's bytes as its own (dialogBytes), so which
// dialogs a full store keeps does not move with the sharing. The store's
// lock guards it.
type sharedTexts struct{ m map[string]string }

// get returns b as a string, the shared copy when there is one.
func (t *sharedTexts) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if v, ok := t.m[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(v) <= maxSharedText && len(t.m) < maxSharedTexts {
		t.m[v] = v
	}
	return v
}
