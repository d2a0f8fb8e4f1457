package main

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/metrics"
)

// MetricsFlags are the --metrics-* flags of ingest and maintain
// (docs/metrics.md).
type MetricsFlags struct {
	Addr        string
	MaxFailures int
}

// AddFlags registers the flags.
func (o *MetricsFlags) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Addr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics and health at /healthz (e.g. 127.0.0.1:9464); off by default")
	f.IntVar(&o.MaxFailures, "metrics-unhealthy-after", 3, "/healthz reports unhealthy after this many failed batches (or passes) in a row")
}

// commandMetrics is the registry and health of one command run; the zero
// value (no --metrics-addr) records nothing.
type commandMetrics struct {
	reg    *prometheus.Registry
	health *metrics.Health
	srv    *metrics.Server
}

// start serves a fresh registry at o.Addr, if set; the caller calls close.
func (o MetricsFlags) start() (*commandMetrics, error) {
	if o.Addr == "" {
		return &commandMetrics{}, nil
	}
	reg := prometheus.NewRegistry()
	h := metrics.NewHealth(o.MaxFailures)
	srv, err := metrics.Serve(o.Addr, reg, h)
	if err != nil {
		return nil, err
	}
	return &commandMetrics{reg: reg, health: h, srv: srv}, nil
}

func (c *commandMetrics) close() {
	if c.srv != nil {
		_ = c.srv.Close()
	}
}

func (c *commandMetrics) ready() {
	if c.health != nil {
		c.health.MarkReady()
	}
}

// maintain registers the maintenance metrics (nil without a server).
func (c *commandMetrics) maintain() (*metrics.Maintain, error) {
	if c.reg == nil {
		return nil, nil
	}
	return metrics.NewMaintain(c.reg)
}

// observe records one batch's outcome in the health state.
func (c *commandMetrics) observe(ok bool) {
	if c.health != nil {
		c.health.Observe(ok)
	}
}

// registerer is the registry the run's metrics go to (nil without a server).
func (c *commandMetrics) registerer() prometheus.Registerer {
	if c.reg == nil {
		return nil
	}
	return c.reg
}
