package config

import (
	"fmt"
	"path/filepath"
)

// TLS names the key logs SIP over TLS is decrypted with
// (services/tlsdecrypt); key logs placed in store.data_dir are read too.
type TLS struct {
	// KeyLogs are NSS key log files (SSLKEYLOGFILE), read at start-up
	// and again when a session's keys are missing and the file changed.
	KeyLogs []string `toml:"key_logs"`
}

// MaxKeyLogs bounds tls.key_logs.
const MaxKeyLogs = 16

func (t TLS) validate() []error {
	var errs []error
	if len(t.KeyLogs) > MaxKeyLogs {
		errs = append(errs, fmt.Errorf("tls.key_logs: %d files, at most %d", len(t.KeyLogs), MaxKeyLogs))
	}
	for _, p := range t.KeyLogs {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("tls.key_logs %q: want an absolute path", p))
		}
	}
	return errs
}
