package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Pending bounds: a trigger waits at most MaxWindow after its moment, so
// few wait at once; past MaxPending a trigger is refused and counted.
const (
	MaxPending = 16
	// pollEvery is how often Run looks for windows that have been recorded.
	pollEvery = time.Second
	// maxPendingBytes bounds one pending request read back at start.
	maxPendingBytes = maxTriggerBytes + 4096
)

// ErrBusy is returned by Trigger past MaxPending waiting triggers.
var ErrBusy = errors.New("evidence: too many triggers waiting for their windows")

// Pending is a trigger waiting for its window to be recorded.
type Pending struct {
	ID      string    `json:"id"`
	Due     time.Time `json:"due"` // when it is built
	PinID   string    `json:"pin"` // the recorder pin keeping its segments
	Request Request   `json:"request"`
}

// BuildResult is one pending bundle's outcome, for Run's callback.
type BuildResult struct {
	Manifest Manifest
	Err      error
}

func (b *Builder) pendingDir() string { return filepath.Join(b.opt.Dir, dirPending) }

// Trigger pins the segments of q's window now and builds the bundle once
// the window has been recorded (Run). The request is kept on disk, so a
// restart (a power cut) builds it at the next start, with the gap shown.
func (b *Builder) Trigger(q Request) (Pending, error) {
	if err := q.check(); err != nil {
		return Pending{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ps, _ := b.pending(); len(ps) >= MaxPending {
		return Pending{}, fmt.Errorf("%w: %d (at most %d)", ErrBusy, len(ps), MaxPending)
	}
	from, to := q.window()
	id := newID(b.opt.Now())
	pin, err := b.src.Pin(from, to, "evidence "+id)
	if err != nil {
		return Pending{}, err
	}
	p := Pending{ID: id, Due: to.Add(settle).UTC(), PinID: pin.ID, Request: q}
	raw, err := json.Marshal(p)
	if err == nil {
		err = os.MkdirAll(b.pendingDir(), dirMode)
	}
	if err == nil {
		err = writeFile(filepath.Join(b.pendingDir(), id+".json"), raw)
	}
	if err != nil {
		b.src.Unpin(pin.ID)
		return Pending{}, fmt.Errorf("evidence: keep trigger: %w", err)
	}
	return p, nil
}

// pending lists the waiting triggers, oldest first; the caller holds mu.
func (b *Builder) pending() ([]Pending, error) {
	ents, err := os.ReadDir(b.pendingDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Pending
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || !idRE.MatchString(strings.TrimSuffix(name, ".json")) {
			continue
		}
		var p Pending
		path := filepath.Join(b.pendingDir(), name)
		if fi, err := e.Info(); err != nil || fi.Size() > maxPendingBytes {
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(raw, &p) != nil || p.ID+".json" != name {
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, c Pending) int { return strings.Compare(a.ID, c.ID) })
	return out, nil
}

// Pending lists the triggers waiting for their windows.
func (b *Builder) Pending() []Pending {
	b.mu.Lock()
	defer b.mu.Unlock()
	ps, _ := b.pending()
	return ps
}

// Run builds each waiting bundle once its window is recorded, until ctx
// ends, and reports each outcome to done (which may be nil).
func (b *Builder) Run(ctx context.Context, done func(BuildResult)) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		b.BuildDue(ctx, done)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// BuildDue builds every waiting bundle whose window is recorded. A
// bundle that cannot be built is dropped with its pin, and done says why.
func (b *Builder) BuildDue(ctx context.Context, done func(BuildResult)) {
	b.mu.Lock()
	ps, _ := b.pending()
	b.mu.Unlock()
	now := b.opt.Now()
	for _, p := range ps {
		if now.Before(p.Due) {
			continue
		}
		m, err := b.build(ctx, p.ID, p.Request)
		if ctx.Err() != nil {
			return // stopping: the request stays for the next start
		}
		b.src.Unpin(p.PinID)
		os.Remove(filepath.Join(b.pendingDir(), p.ID+".json"))
		if done != nil {
			done(BuildResult{Manifest: m, Err: err})
		}
	}
}
