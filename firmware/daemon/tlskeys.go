package daemon

import (
	"log/slog"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/pcapfile"
	"fieldtap/firmware/config"
	"fieldtap/services/tlsdecrypt"
)

// secretsSource is a capture file port that hands on its pcapng
// Decryption Secrets Blocks (pcapfile.Source).
type secretsSource interface {
	OnSecrets(fn func(typ uint32, data []byte))
}

// takeSecrets gives the TLS key logs a capture file carries to keys,
// which an returns once the analysers are built (before any port runs).
// What is logged names the port and the line, never a secret.
func takeSecrets(src capture.Source, keys func() *tlsdecrypt.Keys, log *slog.Logger) {
	s, ok := src.(secretsSource)
	if !ok {
		return
	}
	s.OnSecrets(func(typ uint32, data []byte) {
		if typ != pcapfile.SecretsTLSKeyLog {
			return
		}
		if err := keys().Add(data); err != nil {
			log.Warn("TLS key log in the capture file read up to a bad line", "port", src.Name(), "err", err)
		}
	})
}

// loadKeyLogs reads tls.key_logs and store.data_dir's key logs into
// keys now, and again when a session's keys are missing and a file
// changed (a PBX appends to its SSLKEYLOGFILE as calls come).
func loadKeyLogs(keys *tlsdecrypt.Keys, cfg config.Config, log *slog.Logger) {
	kf := tlsdecrypt.NewKeyFiles(keys, cfg.TLS.KeyLogs, cfg.Store.DataDir, func(path string, err error) {
		log.Warn("TLS key log not read", "file", path, "err", err)
	})
	if n := kf.Load(); n > 0 {
		log.Info("TLS key logs read", "files", n, "sessions", keys.Stats().Sessions)
	}
	keys.SetReload(kf.Reload)
}
