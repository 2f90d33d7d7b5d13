package metrics

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// goSeries are the go_ series the client library's Go collector
// exported, under the same names and HELP texts, so dashboards and
// rules keep working: the memory statistics, GC pauses, goroutines,
// threads, GOGC, GOMEMLIMIT, GOMAXPROCS and the Go version.
func goSeries(e *exposition) {
	gauge := func(name, help string, v float64) { e.addPairs(name, help, typeGauge, "", v) }
	counter := func(name, help string, v float64) { e.addPairs(name, help, typeCounter, "", v) }

	// GC pauses: the quantiles of the recent pauses, the client's way.
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	const gcName, gcHelp = "go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		e.addPairs(gcName, gcHelp, typeSummary, "", gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	e.addPairs(gcName, gcHelp, typeSummary, "_sum", gc.PauseTotal.Seconds())
	e.addPairs(gcName, gcHelp, typeSummary, "_count", float64(gc.NumGC))

	rm := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}, {Name: "/sched/gomaxprocs:threads"}}
	metrics.Read(rm)
	gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", runtimeValue(rm[0]))
	gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", runtimeValue(rm[1]))
	gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", runtimeValue(rm[2]))

	gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	gauge("go_threads", "Number of OS threads created.", float64(threads))
	e.addPairs("go_info", "Information about the Go environment.", typeGauge, "", 1, "version", runtime.Version())

	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	for _, s := range []struct {
		name, help string
		counter    bool
		v          uint64
	}{
		{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", false, m.Alloc},
		{"go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", true, m.TotalAlloc},
		{"go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", false, m.BuckHashSys},
		{"go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", true, m.Frees},
		{"go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", false, m.GCSys},
		{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", false, m.HeapAlloc},
		{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, m.HeapIdle},
		{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", false, m.HeapInuse},
		{"go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", false, m.HeapObjects},
		{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", false, m.HeapReleased},
		{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", false, m.HeapSys},
		{"go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", true, m.Mallocs},
		{"go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", false, m.MCacheInuse},
		{"go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", false, m.MCacheSys},
		{"go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", false, m.MSpanInuse},
		{"go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", false, m.MSpanSys},
		{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", false, m.NextGC},
		{"go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", false, m.OtherSys},
		{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", false, m.StackInuse},
		{"go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", false, m.StackSys},
		{"go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", false, m.Sys},
	} {
		if s.counter {
			counter(s.name, s.help, float64(s.v))
		} else {
			gauge(s.name, s.help, float64(s.v))
		}
	}
	gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(m.LastGC)/1e9)
}

// runtimeValue is a runtime/metrics sample as a float.
func runtimeValue(s metrics.Sample) float64 {
	switch s.Value.Kind() {
	case metrics.KindUint64:
		return float64(s.Value.Uint64())
	case metrics.KindFloat64:
		return s.Value.Float64()
	}
	return 0
}
