package config

import "fmt"

// Upload quota defaults: a long pcap fits one file; a gibibyte leaves a
// small box's card room for the recorder.
const (
	DefaultMaxFileBytes  = 256 << 20
	DefaultMaxTotalBytes = 1 << 30
)

// Files is the [files] table: the quotas of uploads into capture_dir and
// data_dir (services/upload).
type Files struct {
	// MaxFileBytes bounds one uploaded file.
	MaxFileBytes int64 `toml:"max_file_bytes"`
	// MaxTotalBytes bounds the files stored in capture_dir and data_dir
	// together with the declared sizes of the uploads in progress.
	MaxTotalBytes int64 `toml:"max_total_bytes"`
}

func (f Files) validate() []error {
	if f.MaxFileBytes <= 0 || f.MaxTotalBytes < f.MaxFileBytes {
		return []error{fmt.Errorf("files.max_file_bytes %d and max_total_bytes %d: want a positive per-file quota no larger than the total", f.MaxFileBytes, f.MaxTotalBytes)}
	}
	return nil
}
