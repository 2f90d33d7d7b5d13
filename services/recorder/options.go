package recorder

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// The promises (docs/recorder.md): a kill loses at most FlushInterval of
// frames per port, a power cut at most SyncInterval plus one torn block.
const (
	FlushInterval = 100 * time.Millisecond
	SyncInterval  = time.Second
)

// Defaults and bounds for Options.
const (
	DefaultPrefix = "fieldtap"
	// DefaultSegmentBytes closes a segment at 64 MiB: small enough to mail
	// and to open on a laptop, large enough that a busy port does not
	// rotate every few seconds.
	DefaultSegmentBytes = 64 << 20
	// MinSegmentBytes keeps the per-segment cost (a file, an index, a
	// header) small against the data; MaxSegmentBytes keeps one deletion
	// from dropping more than a few percent of a small quota.
	MinSegmentBytes = 1 << 20
	MaxSegmentBytes = 1 << 30
	// DefaultSegmentAge closes a quiet segment after ten minutes, so the
	// newest closed segment (indexed, trusted at boot) is never old.
	DefaultSegmentAge = 10 * time.Minute
	MinSegmentAge     = time.Second
	// MaxSegmentAge bounds the index: at most one seek mark a second.
	MaxSegmentAge = time.Hour
	// DefaultQuotaBytes is 1 GiB: hours of a busy CAN bus or of SIP
	// signalling, minutes of a saturated mirror port.
	DefaultQuotaBytes = 1 << 30
	// MinQuotaSegments: the quota holds at least this many segments, so
	// deleting the oldest never empties the ring.
	MinQuotaSegments = 4
	// DefaultMaxPendingBytes bounds frames waiting for the next write:
	// FlushInterval of a saturated 100 Mbit/s port is 1.25 MB; 8 MiB rides
	// out a disk that stalls for most of a second. Frames past it are
	// counted as not recorded and the next recorded frame says so.
	DefaultMaxPendingBytes = 8 << 20
	MinPendingBytes        = 64 << 10
	// retryEvery is how often a recorder in RAM-only mode tries the disk
	// again, freeing the oldest unpinned segment first.
	retryEvery = 5 * time.Second
	// markEvery spaces seek marks in an index: a search reads at most this
	// much of a segment before its window.
	markEvery = time.Second
)

// Options configure a Recorder. Zero fields take the defaults; Dir is
// required.
type Options struct {
	Dir          string
	Prefix       string // file name prefix, letters, digits, - and . only
	SegmentBytes int64
	SegmentAge   time.Duration
	QuotaBytes   int64
	// MaxPendingBytes bounds frames encoded but not yet written.
	MaxPendingBytes int
	// App is written as each segment's shb_userappl ("fieldtap dev").
	App string
	// VXLANPorts are the SPAN decoder's (netdecode.Options.VXLANPorts):
	// Find matches addresses inside the tunnels the decoder opens.
	VXLANPorts []uint16
	// Now is the clock for segment names, ages and gaps; nil is time.Now.
	Now func() time.Time
}

var prefixRE = regexp.MustCompile(`^[A-Za-z0-9.-]{1,32}$`)

// withDefaults returns o with zero fields filled, or an error naming the
// first value out of bounds.
func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		return o, errors.New("recorder: no directory")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.SegmentAge == 0 {
		o.SegmentAge = DefaultSegmentAge
	}
	if o.QuotaBytes == 0 {
		o.QuotaBytes = DefaultQuotaBytes
	}
	if o.MaxPendingBytes == 0 {
		o.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if o.App == "" {
		o.App = "fieldtap recorder"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, o.check()
}

// check is the one place bounds are enforced; config validation calls it
// through Check so a bad value stops start-up naming the key.
func (o Options) check() error {
	var errs []error
	if !prefixRE.MatchString(o.Prefix) {
		errs = append(errs, fmt.Errorf("prefix %q: want 1 to 32 of letters, digits, '-' and '.'", o.Prefix))
	}
	if o.SegmentBytes < MinSegmentBytes || o.SegmentBytes > MaxSegmentBytes {
		errs = append(errs, fmt.Errorf("segment bytes %d: want %d to %d", o.SegmentBytes, MinSegmentBytes, MaxSegmentBytes))
	}
	if o.SegmentAge < MinSegmentAge || o.SegmentAge > MaxSegmentAge {
		errs = append(errs, fmt.Errorf("segment age %v: want %v to %v", o.SegmentAge, MinSegmentAge, MaxSegmentAge))
	}
	if o.QuotaBytes < MinQuotaSegments*o.SegmentBytes {
		errs = append(errs, fmt.Errorf("quota %d bytes: want at least %d segments of %d bytes", o.QuotaBytes, MinQuotaSegments, o.SegmentBytes))
	}
	if o.MaxPendingBytes < MinPendingBytes {
		errs = append(errs, fmt.Errorf("pending bytes %d: want at least %d", o.MaxPendingBytes, MinPendingBytes))
	}
	return errors.Join(errs...)
}

// Check validates o as Open would, with defaults filled.
func Check(o Options) error {
	_, err := o.withDefaults()
	return err
}
