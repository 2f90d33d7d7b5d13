package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fieldtap/firmware/config"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/evidence"
	"fieldtap/services/sandbox"
	"fieldtap/services/sip"
)

// sealing is the evidence builder and its triggers, or nothing when the
// recorder is off (a bundle is made of recorded segments).
type sealing struct {
	builder *evidence.Builder
	watcher *evidence.Watcher
}

// openSealing builds the evidence builder over the recorder and the
// configured triggers over the SIP and J1939 stores. Config.Validate has
// checked the triggers.
func openSealing(cfg config.Recorder, rec *recording, an *analysers, version string, log *slog.Logger) *sealing {
	if rec.rec == nil {
		return &sealing{}
	}
	b, err := evidence.New(evidence.Options{Dir: cfg.EvidenceDir, MaxBytes: cfg.EvidenceBytes, Version: version,
		Fence: func(s string) string { return untrusted.Fence(s, false) }}, rec.rec)
	if err != nil {
		log.Error("evidence bundles off", "err", err)
		return &sealing{}
	}
	var specs []evidence.Spec
	for _, t := range cfg.Triggers {
		before, _ := t.Window(t.Before)
		after, _ := t.Window(t.After)
		s := evidence.Spec{Kind: t.Kind, Before: before, After: after}
		if t.Kind == config.TriggerSIPFilter {
			s.Filter, _ = sip.Compile(t.Filter)
		}
		specs = append(specs, s)
	}
	s := &sealing{builder: b}
	if len(specs) > 0 {
		s.watcher = evidence.NewWatcher(b, specs, an.sip, an.j1939)
	}
	return s
}

// run builds due bundles (including those a restart left pending) and
// watches the triggers until ctx ends.
func (s *sealing) run(ctx context.Context, wg *sync.WaitGroup, log *slog.Logger) {
	if s.builder == nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.builder.Run(ctx, func(r evidence.BuildResult) {
			if r.Err != nil {
				log.Error("evidence bundle not built", "err", r.Err)
				return
			}
			log.Info("evidence bundle sealed", "id", r.Manifest.ID, "reason", r.Manifest.Reason,
				"from", r.Manifest.From.Format(time.RFC3339Nano), "to", r.Manifest.To.Format(time.RFC3339Nano), "gaps", len(r.Manifest.Gaps))
		})
	}()
	if s.watcher != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.watcher.Run(ctx)
		}()
	}
}

// fileSandbox is the one sandbox the MCP layer's file tools, resources
// and HTTP GET read through: exports, evidence bundles (verified before
// any file of theirs is opened) and the capture directory.
func fileSandbox(cfg config.Config, an *analysers, seal *sealing) (*sandbox.Sandbox, error) {
	abs := func(dir string) (string, error) { return filepath.Abs(dir) }
	exports, err := abs(an.sipExport.Dir())
	if err != nil {
		return nil, err
	}
	captures, err := abs(cfg.Store.CaptureDir)
	if err != nil {
		return nil, err
	}
	roots := []sandbox.Root{{Name: "exports", Dir: exports}, {Name: capturesRoot, Dir: captures}}
	if b := seal.builder; b != nil {
		dir, err := abs(b.Dir())
		if err != nil {
			return nil, err
		}
		roots = append(roots, sandbox.Root{Name: "evidence", Dir: dir, Verify: func(rel string) error {
			id, _, _ := strings.Cut(rel, "/")
			_, err := b.Verify(id)
			return err
		}})
	}
	return sandbox.New(roots...)
}
