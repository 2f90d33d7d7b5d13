package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestTLSKeyLogsValidate(t *testing.T) {
	c := Default()
	c.TLS.KeyLogs = []string{"/var/lib/fieldtap/pbx.keylog"}
	if err := c.Validate(); err != nil {
		t.Fatalf("an absolute path: %v", err)
	}
	c.TLS.KeyLogs = []string{"pbx.keylog"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `tls.key_logs "pbx.keylog": want an absolute path`) {
		t.Errorf("a relative path: %v", err)
	}
	c.TLS.KeyLogs = nil
	for i := range MaxKeyLogs + 1 {
		c.TLS.KeyLogs = append(c.TLS.KeyLogs, fmt.Sprintf("/k/%d.keylog", i))
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "at most 16") {
		t.Errorf("%d files: %v", len(c.TLS.KeyLogs), err)
	}
}
