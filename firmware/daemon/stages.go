package daemon

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A stage is one named step of the box's life. Its start brings its part
// up and returns how to stop it, or nil when nothing of it runs or stays
// open. A start that fails leaves nothing of its own behind: it undoes
// what it did before returning the error, and the stages before it are
// stopped by the runner.
type stage struct {
	name  string
	start func(ctx context.Context) (stop func() error, err error)
}

// stack is the stages that started, in start order, with their stops.
type stack struct {
	log   *slog.Logger
	stops []namedStop
}

type namedStop struct {
	name string
	stop func() error
}

// startStages starts the stages in order, logging each at debug level
// with how long its start took. When one fails, it is logged at error
// level by name, the stages started before it are stopped in reverse
// (stack.stop), and its error is returned as it is. A start that panics
// has the stages before it stopped too, as the deferred stops of one long
// function would, and the panic goes on.
func startStages(ctx context.Context, log *slog.Logger, stages []stage) (*stack, error) {
	s := &stack{log: log}
	for _, st := range stages {
		began := time.Now()
		stop, err := s.start(ctx, st)
		if err != nil {
			log.Error("stage failed to start; stopping the ones before it", "stage", st.name, "err", err, "took", time.Since(began))
			s.stop()
			return nil, err
		}
		log.Debug("stage started", "stage", st.name, "took", time.Since(began))
		if stop != nil {
			s.stops = append(s.stops, namedStop{st.name, stop})
		}
	}
	return s, nil
}

// start runs st's start; if it panics, the stages started before it stop
// first.
func (s *stack) start(ctx context.Context, st stage) (func() error, error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("stage panicked; stopping the ones before it", "stage", st.name)
			s.stop()
			panic(p)
		}
	}()
	return st.start(ctx)
}

// stop stops the started stages in the reverse of their start order, each
// once, logging each at debug level with how long its stop took. A stop's
// error is logged at error level by name and the rest still stop.
func (s *stack) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		st := s.stops[i]
		began := time.Now()
		if err := st.stop(); err != nil {
			s.log.Error("stage stopped with an error", "stage", st.name, "err", err, "took", time.Since(began))
			continue
		}
		s.log.Debug("stage stopped", "stage", st.name, "took", time.Since(began))
	}
	s.stops = nil
}

// group is goroutines that run until their stage stops them: stop cancels
// their context and waits for every one. The context is detached from
// Run's, so a call still draining at shutdown finds them running.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newGroup(ctx context.Context) *group {
	g := &group{}
	g.ctx, g.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return g
}

// stop cancels the group's context and waits for its goroutines; it
// cannot fail, and has a stage stop's type.
func (g *group) stop() error {
	g.cancel()
	g.wg.Wait()
	return nil
}
