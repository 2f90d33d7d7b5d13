package transmit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFileAuditorRefusesAfterClose: a record made after Close fails (so
// the write it guards is refused) and leaves the file as it was.
func TestFileAuditorRefusesAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transmit.jsonl")
	fa, err := OpenFileAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fa.Record(context.Background(), Record{Event: EventPlanned}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := fa.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fa.Record(context.Background(), Record{Event: EventModeError}); err == nil {
		t.Error("a record after Close succeeded")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the file changed after Close: %q", after)
	}
}
