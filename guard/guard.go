// Package guard turns a panic in one request or background task into a
// logged, counted failure of that task instead of the end of the process.
// One Quire process serves every site: a bug that one document or request
// triggers must cost that document or request, not everyone's service.
//
// Go cannot recover a panic from another goroutine, so every goroutine
// that runs Quire code defers the recovery itself, through Do or Run. A nil logger is slog.Default().
package guard

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Where a panic was recovered: the label values of quire_panics_total.
// Each is counted from 0 so dashboards and alerts see the series before
// the first panic.
const (
	HTTP       = "http"       // a request handler
	Pipeline   = "pipeline"   // an action worker
	Indexer    = "indexer"    // the search index feeder
	Background = "background" // content type detection and retention
	FolderMove = "foldermove" // asynchronous folder moves
	Storage    = "storage"    // Badger's GC and file trimming
	Backup     = "backup"     // an online backup's stream
	Metrics    = "metrics"    // the per-site counts of a /metrics scrape
)

var panics = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "quire_panics_total",
	Help: "Panics recovered without ending the process, by where (http, pipeline, indexer, ...). Each one is a bug.",
}, []string{"where"})

func init() {
	for _, w := range []string{HTTP, Pipeline, Indexer, Background, FolderMove, Storage, Backup, Metrics} {
		panics.WithLabelValues(w)
	}
}

// Collector is the panic counter, for the node's metrics registry.
func Collector() prometheus.Collector { return panics }

// Count returns how many panics were recovered at where (for tests).
func Count(where string) float64 {
	var m dto.Metric
	if err := panics.WithLabelValues(where).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// ErrPanic is wrapped by the error Run returns for a panic.
var ErrPanic = errors.New("internal error")

// Do calls fn and recovers a panic in it (see Report); it reports whether
// fn panicked. A loop calls Do per iteration and carries on.
func Do(log *slog.Logger, where string, fn func(), attrs ...any) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			Report(log, where, v, attrs...)
			panicked = true
		}
	}()
	fn()
	return false
}

// Run is Do for a task with an error: a panic becomes an error wrapping
// ErrPanic, which the caller records as it records any failure.
func Run(log *slog.Logger, where string, fn func() error, attrs ...any) (err error) {
	defer func() {
		if v := recover(); v != nil {
			Report(log, where, v, attrs...)
			err = fmt.Errorf("%w: %v", ErrPanic, v)
		}
	}()
	return fn()
}

// Report logs a recovered panic value with the stack of the panicking
// goroutine and counts it. Call it from the deferred function that
// recovered, so the stack still holds the frames that panicked.
func Report(log *slog.Logger, where string, v any, attrs ...any) {
	if log == nil {
		log = slog.Default()
	}
	panics.WithLabelValues(where).Inc()
	log.Error("panic recovered", append([]any{"where", where, "panic", fmt.Sprint(v), "stack", string(debug.Stack())}, attrs...)...)
}
