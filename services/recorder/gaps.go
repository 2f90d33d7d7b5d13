package recorder

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"
)

// Gap reasons: the box's own vocabulary.
const (
	// GapUncleanStop: the recorder was killed or lost power; From is the
	// newest frame that survived, To the next start.
	GapUncleanStop = "unclean_stop"
	// GapStopped: the box was stopped cleanly and started again later.
	GapStopped = "stopped"
	// GapDiskError: a write failed (a full disk); frames were kept in RAM
	// only until a write succeeded again.
	GapDiskError = "disk_error"
	// GapBufferFull: the disk fell so far behind that frames past
	// MaxPendingBytes were not recorded.
	GapBufferFull = "buffer_full"
)

// maxGaps bounds the gap journal; the oldest go first and are counted.
const maxGaps = 256

// maxGapsBytes bounds gaps.json read at boot.
const maxGapsBytes = 1 << 20

// Gap is a span of time the recording does not cover, for every port or
// for the ports listed.
type Gap struct {
	Reason string     `json:"reason"`
	From   time.Time  `json:"from"` // newest frame (or moment) before the gap
	To     *time.Time `json:"to"`   // first moment recording covered again; null while open
	// NotRecorded counts frames lost in the gap by port, where known (a
	// disk error or a full buffer; not frames that arrived while the box
	// was off).
	NotRecorded map[string]uint64 `json:"not_recorded"`
	// PortsLast is each port's newest recorded frame before an unclean
	// stop: the per-port bound of the loss.
	PortsLast map[string]time.Time `json:"ports_last,omitempty"`
	CutBytes  int64                `json:"cut_bytes,omitempty"` // torn tail removed at recovery
	Detail    string               `json:"detail,omitempty"`    // the error, for disk_error
}

func (g Gap) clone() Gap {
	g.NotRecorded = maps.Clone(g.NotRecorded)
	g.PortsLast = maps.Clone(g.PortsLast)
	if g.To != nil {
		t := *g.To
		g.To = &t
	}
	if g.NotRecorded == nil {
		g.NotRecorded = map[string]uint64{}
	}
	return g
}

// gapJournal is the bounded list of gaps, oldest first, kept in gaps.json.
type gapJournal struct {
	Gaps    []Gap  `json:"gaps"`
	Dropped uint64 `json:"dropped"` // gaps pushed out by maxGaps
}

func (j *gapJournal) add(g Gap) *Gap {
	if len(j.Gaps) >= maxGaps {
		j.Gaps = j.Gaps[1:]
		j.Dropped++
	}
	j.Gaps = append(j.Gaps, g)
	return &j.Gaps[len(j.Gaps)-1]
}

func readGaps(dir string) (gapJournal, error) {
	var j gapJournal
	err := readSmallJSON(filepath.Join(dir, gapsFile), maxGapsBytes, &j)
	return j, err
}

// readSmallJSON reads a bounded JSON file into v; a missing file leaves v.
func readSmallJSON(path string, limit int64, v any) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Size() > limit {
		return fmt.Errorf("%s: %d bytes, over the %d-byte bound", path, st.Size(), limit)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
