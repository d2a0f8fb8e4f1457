// Package metrics defines lakesink's Prometheus metrics for the
// long-running commands (ingest, maintain) and the HTTP endpoint that
// serves them, with github.com/prometheus/client_golang.
//
// There is no global registry: a caller makes a registry (one per process
// or command), passes it to NewIngest or NewMaintain, hands the result to
// the library through its options (kafka.GroupOptions.Metrics,
// compaction.ServiceOptions.Metrics) or feeds it batch reports itself, and
// serves the registry with Serve:
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.NewIngest(reg, tableURL)
//	health := metrics.NewHealth(3)
//	srv, err := metrics.Serve("127.0.0.1:9464", reg, health) // /metrics, /healthz
//	defer srv.Close()
//
// Names and labels follow the Prometheus conventions (base units, _total
// for counters, _seconds for durations) and are listed in docs/metrics.md.
// Every metric carries a table label (the table URL), fixed when the
// metrics are created.
//
// Concurrency: every method may be called from any goroutine.
package metrics
