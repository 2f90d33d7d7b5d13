package tlsdecrypt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Labels of the NSS key log format we use. Others (early traffic,
// exporter secrets, the RSA form) are skipped.
const (
	labelClientRandom = "CLIENT_RANDOM"
	labelCHS          = "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
	labelSHS          = "SERVER_HANDSHAKE_TRAFFIC_SECRET"
	labelCTS0         = "CLIENT_TRAFFIC_SECRET_0"
	labelSTS0         = "SERVER_TRAFFIC_SECRET_0"
)

// maxSecret is the longest secret a line may carry (SHA-384's 48 bytes
// is the longest any suite here derives).
const maxSecret = 48

// maxKeyLogLine bounds one line; real lines are under 200 bytes.
const maxKeyLogLine = 1024

// secrets are one session's key log entries, by client random.
type secrets struct {
	master     []byte // TLS 1.2
	chs, shs   []byte // TLS 1.3 handshake traffic secrets
	cts0, sts0 []byte // TLS 1.3 application traffic secrets
	added      uint64 // insertion order, for eviction
}

// KeyLogError says which line of a key log was refused and why. It never
// carries the line itself: that would be a secret.
type KeyLogError struct {
	Line int
	Why  string
}

func (e *KeyLogError) Error() string { return fmt.Sprintf("key log line %d: %s", e.Line, e.Why) }

// ParseKeyLog reads NSS key log text and calls fn for each entry whose
// label it knows. Blank lines and # comments are skipped, as are lines of
// other labels. It stops at the first malformed line of a known label,
// or one longer than maxKeyLogLine, with a *KeyLogError naming it.
func ParseKeyLog(data []byte, fn func(label string, random [32]byte, secret []byte)) error {
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > maxKeyLogLine {
			return &KeyLogError{n, fmt.Sprintf("%d bytes, longer than %d", len(line), maxKeyLogLine)}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		f := bytes.Fields(line)
		label := string(f[0])
		switch label {
		case labelClientRandom, labelCHS, labelSHS, labelCTS0, labelSTS0:
		default:
			continue
		}
		if len(f) != 3 {
			return &KeyLogError{n, fmt.Sprintf("%s wants a client random and a secret, found %d fields", label, len(f)-1)}
		}
		var random [32]byte
		if len(f[1]) != 64 {
			return &KeyLogError{n, fmt.Sprintf("client random is %d hex digits, want 64", len(f[1]))}
		}
		if _, err := hex.Decode(random[:], f[1]); err != nil {
			return &KeyLogError{n, "client random is not hex"}
		}
		if len(f[2])%2 != 0 || len(f[2]) == 0 || len(f[2]) > 2*maxSecret {
			return &KeyLogError{n, fmt.Sprintf("secret is %d hex digits, want an even count up to %d", len(f[2]), 2*maxSecret)}
		}
		secret := make([]byte, len(f[2])/2)
		if _, err := hex.Decode(secret, f[2]); err != nil {
			return &KeyLogError{n, "secret is not hex"}
		}
		if label == labelClientRandom && len(secret) != 48 {
			return &KeyLogError{n, fmt.Sprintf("CLIENT_RANDOM master secret is %d bytes, want 48", len(secret))}
		}
		fn(label, random, secret)
	}
	return nil
}

// KeyStats count what the key store holds and refused.
type KeyStats struct {
	Sessions int    // client randoms held
	Evicted  uint64 // sessions dropped, oldest first, at the cap
	Refused  uint64 // key log texts (files, DSBs) refused, wholly or from a bad line on
}

// Keys holds session secrets by client random, at most max sessions; the
// oldest go first. It is safe for concurrent use: files and capture
// readers add, analysers look up.
type Keys struct {
	mu     sync.Mutex
	m      map[[32]byte]*secrets
	max    int
	seq    uint64
	st     KeyStats
	onMiss func() // reloads key log files; see SetReload
}

// DefaultMaxSessions bounds the key store: a few hundred bytes a session.
const DefaultMaxSessions = 4096

// NewKeys returns an empty store of at most max sessions
// (DefaultMaxSessions when max <= 0).
func NewKeys(max int) *Keys {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &Keys{m: map[[32]byte]*secrets{}, max: max}
}

// Add reads key log text into the store. Entries before a malformed line
// are kept; the error names the line.
func (k *Keys) Add(data []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	err := ParseKeyLog(data, func(label string, r [32]byte, secret []byte) {
		s := k.m[r]
		if s == nil {
			if len(k.m) >= k.max {
				k.evictOldest()
			}
			k.seq++
			s = &secrets{added: k.seq}
			k.m[r] = s
		}
		switch label {
		case labelClientRandom:
			s.master = secret
		case labelCHS:
			s.chs = secret
		case labelSHS:
			s.shs = secret
		case labelCTS0:
			s.cts0 = secret
		case labelSTS0:
			s.sts0 = secret
		}
	})
	if err != nil {
		k.st.Refused++
	}
	return err
}

func (k *Keys) evictOldest() {
	var oldK [32]byte
	var old *secrets
	for r, s := range k.m {
		if old == nil || s.added < old.added {
			oldK, old = r, s
		}
	}
	delete(k.m, oldK)
	k.st.Evicted++
}

// SetReload sets what a lookup that finds nothing runs first, outside
// the store's lock: rereading key log files a running PBX appends to.
// fn must bound its own rate.
func (k *Keys) SetReload(fn func()) {
	k.mu.Lock()
	k.onMiss = fn
	k.mu.Unlock()
}

// lookup returns a copy of the secrets of random.
func (k *Keys) lookup(random [32]byte) (secrets, bool) {
	for try := 0; ; try++ {
		k.mu.Lock()
		s, ok := k.m[random]
		reload := k.onMiss
		var out secrets
		if ok {
			out = *s
		}
		k.mu.Unlock()
		if ok || try > 0 || reload == nil {
			return out, ok
		}
		reload()
	}
}

// Stats returns the store's counters.
func (k *Keys) Stats() KeyStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.st
	s.Sessions = len(k.m)
	return s
}

// MaxKeyLogFile bounds what one key log file contributes: its last
// MaxKeyLogFile bytes, where a running PBX appends its newest sessions.
const MaxKeyLogFile = 4 << 20

// ReadKeyLogFile reads a key log with the care a secret needs: a regular
// file, neither group- nor world-accessible (the mode a PBX's
// SSLKEYLOGFILE should have), at most its last MaxKeyLogFile bytes from
// the first whole line. The error names the file and what was wrong.
func ReadKeyLogFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("key log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("key log: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("key log %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key log %s: mode %#o lets group or others at the secrets; chmod 600 it", path, perm)
	}
	size, skip := fi.Size(), int64(0)
	if size > MaxKeyLogFile {
		skip = size - MaxKeyLogFile
	}
	buf := make([]byte, size-skip)
	n, err := f.ReadAt(buf, skip)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("key log %s: %w", path, err)
	}
	buf = buf[:n]
	if skip > 0 { // start at the first whole line
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 && i < len(buf)-1 {
		buf = buf[:i+1] // a line still being written waits for the next read
	}
	return buf, nil
}
