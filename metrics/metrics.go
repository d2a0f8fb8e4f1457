package metrics

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Batch is what one ingest batch did, as the --json progress lines report
// it.
type Batch struct {
	// Result: "committed", "skipped" (already in the table), "abandoned"
	// (a consumer-group rebalance raced it) or "failed".
	Result string
	// Records and Bytes read from the source into the batch.
	Records, Bytes int64
	// Files and FileBytes committed.
	Files     int
	FileBytes int64
	// BadRecords set aside (or dropped) by the batch.
	BadRecords int
	// Duration of the whole batch; Commit of the table write and commit.
	Duration, Commit time.Duration
	// Conflict: the commit lost to a concurrent writer (Delta's
	// ConcurrentModification, or a txn another worker moved).
	Conflict bool
	// Retry: the batch is being retried after a failure.
	Retry bool
}

// Ingest holds the lakesink_ingest_* metrics of one table.
type Ingest struct {
	records, bytes       prometheus.Counter
	batches              *prometheus.CounterVec
	duration, commit     prometheus.Histogram
	conflicts, retries   prometheus.Counter
	files, fileBytes     prometheus.Counter
	badRecords           prometheus.Counter
	lag                  *prometheus.GaugeVec
	pending              prometheus.Gauge
	mu                   sync.Mutex
	lastSuccess          time.Time
	now                  func() time.Time
	committedRecords     int64
	committedRecordsSeen bool
}

// NewIngest registers the ingest metrics of tableURL on reg. It fails if
// reg already holds metrics of these names with the same table label.
func NewIngest(reg prometheus.Registerer, tableURL string) (*Ingest, error) {
	m := &Ingest{now: time.Now, lastSuccess: time.Now()}
	c := prometheus.Labels{"table": tableURL}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: c})
	}
	buckets := prometheus.ExponentialBuckets(0.01, 2, 14) // 10 ms .. 82 s
	m.records = counter("lakesink_ingest_records_total", "Records read from the source into committed batches.")
	m.bytes = counter("lakesink_ingest_bytes_total", "Bytes read from the source into committed batches (Kafka: keys and values).")
	m.batches = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lakesink_ingest_batches_total",
		Help: "Batches by result: committed, skipped (already in the table), abandoned (rebalance), failed.", ConstLabels: c}, []string{"result"})
	m.duration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lakesink_ingest_batch_duration_seconds",
		Help: "Time from a batch's start (its first record) to its commit.", ConstLabels: c, Buckets: buckets})
	m.commit = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lakesink_ingest_commit_duration_seconds",
		Help: "Time to write a batch's files and commit them.", ConstLabels: c, Buckets: buckets})
	m.conflicts = counter("lakesink_ingest_commit_conflicts_total", "Commits lost to a concurrent writer.")
	m.retries = counter("lakesink_ingest_commit_retries_total", "Batches retried after a failed write or commit.")
	m.files = counter("lakesink_ingest_files_written_total", "Data files committed.")
	m.fileBytes = counter("lakesink_ingest_file_bytes_written_total", "Bytes of data files committed.")
	m.badRecords = counter("lakesink_ingest_bad_records_total", "Records that did not fit the schema (rows of the bad-records table).")
	m.lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lakesink_ingest_kafka_lag_records",
		Help: "Kafka end offset minus the next offset to write (txn version + 1), per partition owned.", ConstLabels: c}, []string{"topic", "partition"})
	m.pending = prometheus.NewGauge(prometheus.GaugeOpts{Name: "lakesink_ingest_source_files_pending",
		Help: "Source files seen but not yet in a committed batch (file source).", ConstLabels: c})
	since := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "lakesink_ingest_seconds_since_last_success",
		Help: "Seconds since the last committed or skipped batch (or since the start).", ConstLabels: c}, func() float64 {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.now().Sub(m.lastSuccess).Seconds()
	})
	for _, col := range []prometheus.Collector{m.records, m.bytes, m.batches, m.duration, m.commit, m.conflicts, m.retries,
		m.files, m.fileBytes, m.badRecords, m.lag, m.pending, since} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	for _, r := range []string{"committed", "skipped", "abandoned", "failed"} {
		m.batches.WithLabelValues(r) // exported at 0 from the start
	}
	return m, nil
}

// ObserveBatch records one batch. Records, bytes and files count only for
// committed batches.
func (m *Ingest) ObserveBatch(b Batch) {
	if m == nil {
		return
	}
	m.batches.WithLabelValues(b.Result).Inc()
	switch b.Result {
	case "committed":
		m.records.Add(float64(b.Records))
		m.bytes.Add(float64(b.Bytes))
		m.files.Add(float64(b.Files))
		m.fileBytes.Add(float64(b.FileBytes))
		m.duration.Observe(b.Duration.Seconds())
		m.commit.Observe(b.Commit.Seconds())
		fallthrough
	case "skipped":
		m.mu.Lock()
		m.lastSuccess = m.now()
		m.mu.Unlock()
	}
	m.badRecords.Add(float64(b.BadRecords))
	if b.Conflict {
		m.conflicts.Inc()
	}
	if b.Retry {
		m.retries.Inc()
	}
}

// SetKafkaLag sets the lag of one partition; lag < 0 removes it (the
// partition is no longer owned).
func (m *Ingest) SetKafkaLag(topic string, partition int32, lag int64) {
	if m == nil {
		return
	}
	p := strconv.Itoa(int(partition))
	if lag < 0 {
		m.lag.DeleteLabelValues(topic, p)
		return
	}
	m.lag.WithLabelValues(topic, p).Set(float64(lag))
}

// SetSourceFilesPending sets the number of source files not yet committed.
func (m *Ingest) SetSourceFilesPending(n int) {
	if m != nil {
		m.pending.Set(float64(n))
	}
}

// Maintain holds the lakesink_maintain_* metrics.
type Maintain struct {
	compacted, rewritten, vacuumed, checkpoints, logCleaned *prometheus.CounterVec
	errors                                                  *prometheus.CounterVec
	passes                                                  *prometheus.CounterVec
}

// MaintainPass is what one maintenance pass over a table did.
type MaintainPass struct {
	Table string // the table URL
	// FilesCompacted removed by OPTIMIZE; BytesRewritten the bytes of the
	// files it removed (read and written again).
	FilesCompacted int
	BytesRewritten int64
	FilesVacuumed  int // data files VACUUM deleted
	// CheckpointsWritten: 0 or 1.
	CheckpointsWritten int
	LogFilesDeleted    int // log files log cleanup deleted
	// FailedStep names the step that failed ("" when none).
	FailedStep string
}

// NewMaintain registers the maintenance metrics on reg (labelled by table).
func NewMaintain(reg prometheus.Registerer) (*Maintain, error) {
	vec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{"table"}, labels...))
	}
	m := &Maintain{
		compacted:   vec("lakesink_maintain_files_compacted_total", "Data files removed by OPTIMIZE (rewritten into larger files)."),
		rewritten:   vec("lakesink_maintain_bytes_rewritten_total", "Bytes of the data files OPTIMIZE rewrote."),
		vacuumed:    vec("lakesink_maintain_files_vacuumed_total", "Files deleted by VACUUM."),
		checkpoints: vec("lakesink_maintain_checkpoints_written_total", "Checkpoints written."),
		logCleaned:  vec("lakesink_maintain_log_files_deleted_total", "Expired log files deleted by log cleanup."),
		errors:      vec("lakesink_maintain_errors_total", "Failed maintenance steps, by step.", "step"),
		passes:      vec("lakesink_maintain_passes_total", "Maintenance passes over a table."),
	}
	for _, c := range []prometheus.Collector{m.compacted, m.rewritten, m.vacuumed, m.checkpoints, m.logCleaned, m.errors, m.passes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ObservePass records one pass.
func (m *Maintain) ObservePass(p MaintainPass) {
	if m == nil {
		return
	}
	m.passes.WithLabelValues(p.Table).Inc()
	m.compacted.WithLabelValues(p.Table).Add(float64(p.FilesCompacted))
	m.rewritten.WithLabelValues(p.Table).Add(float64(p.BytesRewritten))
	m.vacuumed.WithLabelValues(p.Table).Add(float64(p.FilesVacuumed))
	m.checkpoints.WithLabelValues(p.Table).Add(float64(p.CheckpointsWritten))
	m.logCleaned.WithLabelValues(p.Table).Add(float64(p.LogFilesDeleted))
	if p.FailedStep != "" {
		m.errors.WithLabelValues(p.Table, p.FailedStep).Inc()
	}
}
