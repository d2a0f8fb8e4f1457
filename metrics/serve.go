package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health is the state /healthz reports: ready once MarkReady was called
// (the command opened its first snapshot), and not ready while the last
// MaxFailures batches (or passes) in a row failed.
type Health struct {
	maxFailures int
	mu          sync.Mutex
	ready       bool
	failures    int
}

// NewHealth returns a Health that turns unready after maxFailures
// consecutive failures (at least 1).
func NewHealth(maxFailures int) *Health {
	return &Health{maxFailures: max(1, maxFailures)}
}

// MarkReady records that the first snapshot is open.
func (h *Health) MarkReady() {
	h.mu.Lock()
	h.ready = true
	h.mu.Unlock()
}

// Observe records the outcome of one batch or pass.
func (h *Health) Observe(ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ok {
		h.failures = 0
	} else {
		h.failures++
	}
}

// Status reports whether the command is healthy and why not.
func (h *Health) Status() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case !h.ready:
		return false, "not ready: the first snapshot is not open yet"
	case h.failures >= h.maxFailures:
		return false, fmt.Sprintf("unhealthy: the last %d batches failed", h.failures)
	}
	return true, "ok"
}

// Server serves /metrics (Prometheus text format) and /healthz.
type Server struct {
	// Addr is the address listened on (host:port, the real port for :0).
	Addr string
	srv  *http.Server
	done chan error
}

// Serve listens on addr and serves reg at /metrics and health at /healthz
// (200 "ok", else 503 with the reason) until Close. Errors: the listen
// error (address in use, bad address).
func Serve(addr string, reg *prometheus.Registry, health *Health) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		ok, why := health.Status()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, why)
	})
	s := &Server{Addr: l.Addr().String(), srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(l) }()
	return s, nil
}

// Close stops the server and waits for its goroutine.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
