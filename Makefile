# lakesink — see README.md. Every target works on a fresh machine with Go installed.
GO      ?= go
BIN     := bin/lakesink
PKGS    := ./...
export GOFLAGS ?= -buildvcs=false

.PHONY: all build test test-short test-kafka kafka bench bench-engines demo lint fuzz soak clean s3-server interop

all: build

build:
	$(GO) build -o $(BIN) ./cmd/lakesink

# A local S3-compatible server (versitygw) for the S3 integration tests,
# built from the Go module proxy and cached in $(go env GOPATH)/bin.
s3-server:
	./scripts/install-s3-server.sh

# A real Kafka broker (Apache Kafka 4.x, KRaft) for the *Broker tests, from
# Maven Central jars into ~/.cache/lakesink/kafka (needs java and mvn).
kafka:
	./scripts/install-kafka.sh

# All unit and integration tests (seed corpora of the fuzz targets included),
# the S3 ones against the local server, the arrow-go interop module, and the
# examples module (lakesink used from another module through its public API).
# The real-broker tests (*Broker) run in test-kafka.
test: build s3-server
	LAKESINK_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 20m -skip 'Broker' $(PKGS)
	cd interop && $(GO) test -count=1 ./...
	cd examples && $(GO) test -count=1 ./...

# The consumer-group and real-broker tests (names containing Group or
# Broker) against an installed broker; a missing broker fails them.
test-kafka: build kafka
	LAKESINK_BIN=$(CURDIR)/$(BIN) LAKESINK_REQUIRE_KAFKA=1 $(GO) test -count=1 -timeout 30m -run 'Group|Broker' $(PKGS)

test-short:
	$(GO) test -short -count=1 $(PKGS)

# Benchmarks of every package and of the bench/ module (the rows against
# DuckDB: cgo, kept out of the main module; its first build links DuckDB's
# static library), then one summary table (figure, lakesink, baseline,
# ratio) collected from the "BENCHROW" lines the benchmarks print, headed by
# the machine and date; bin/bench.md is the same table in Markdown (the
# README's "Benchmarks" section). Lakesink and each baseline run as whole
# processes, alternated (internal/testutil/benchproc); packages run one at a
# time (-p 1) so that no two benchmarks share the machine. About 5 minutes
# on the idle 2-core development machine, 25 when it is loaded. A failed benchmark fails the
# target after the table is printed. cmd/lakesink's BenchmarkProfile* (runs
# for pprof, no rows) are skipped.
bench: build
	$(GO) test -p 1 -run '^$$' -bench . -skip '^BenchmarkProfile' -benchtime 1x -timeout 30m $(PKGS) 2>&1 | tee bin/bench.out
	cd bench && LAKESINK_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m . 2>&1 | tee -a ../bin/bench.out
	@$(GO) run ./internal/benchtable < bin/bench.out
	@$(GO) run ./internal/benchtable -md < bin/bench.out > bin/bench.md && echo "Markdown table: bin/bench.md"
	@if grep -q '^FAIL' bin/bench.out; then echo "make bench: some benchmarks failed (FAIL in bin/bench.out)"; exit 1; fi

demo: build
	./scripts/demo.sh

lint:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fuzz:
	./scripts/fuzz.sh

# Longer crash runs: the fault soak for 10 minutes (TestSoak: ~5% of all
# storage calls fail while ingest, OPTIMIZE, VACUUM and log cleanup run; its
# summary line is printed), the ingest + compact + `vacuum --retain 0h
# --force` loop for 60 s (8 s in `make test`), the kill -9 ingest tests
# with 200 kills each (5 in `make test`; S3 20, Kafka 50; the bronze ->
# silver pipeline 20 of each query on 20,000 rows, 4 on 2,000 in `make
# test`), the hostile-input (bomb) tests at full size (LAKESINK_BOMB_FULL=1)
# and 100 sequences of the txlog model test (4 in `make test`), and the
# compaction crash tests at every occurrence of every crash point (`make
# test`: a point met more than three times, as VACUUM's one delete per
# file, at its first two and its last).
soak: build
	LAKESINK_SOAK_DURATION=10m $(GO) test -count=1 -timeout 30m -run '^TestSoak$$' -v ./tests
	LAKESINK_VACUUM_LOOP_DURATION=60s $(GO) test -count=1 -timeout 20m -run '^TestVacuumRetainZeroWhileIngestingAndCompacting$$' -v ./tests
	LAKESINK_KILL_TRIALS=200 LAKESINK_S3_KILL_TRIALS=20 LAKESINK_KAFKA_KILL_TRIALS=50 LAKESINK_PIPELINE_KILL_TRIALS=20 $(GO) test -count=1 -timeout 60m -run 'KillDashNine' -v ./tests
	LAKESINK_BOMB_FULL=1 $(GO) test -count=1 -timeout 30m -run 'Bomb' ./txlog ./sink ./internal/parquetio
	RAPID_CHECKS=100 $(GO) test -count=1 -timeout 30m -run '^TestModelReplayAndCommits$$' ./txlog
	LAKESINK_CRASH_POINTS=all $(GO) test -count=1 -timeout 30m -run 'Crash' ./compaction

# Whole processes of lakesink against delta-rs and Spark (issue 22, "Against
# delta-rs"; tests/enginebench_test.go), then the size of the 3M flights'
# data files against Spark's for the same rows (issue 22, "Files as small as
# Spark's"; interop/engines TestDataFilesAsSmallAsSpark, also run by make
# interop): 7 minutes on the idle 2-core machine, up to 25 when loaded.
bench-engines: build
	./scripts/install-engines.sh
	eval "$$(./scripts/install-engines.sh --env)" && LAKESINK_BENCH_ENGINES=1 \
		$(GO) test -run '^$$' -bench 'BenchmarkAgainstDeltaRS' -benchtime 1x -timeout 60m ./tests 2>&1 | tee bin/bench-engines.out
	eval "$$(./scripts/install-engines.sh --env)" && cd interop && LAKESINK_ENGINES=1 \
		$(GO) test -count=1 -v -run '^TestDataFilesAsSmallAsSpark$$' -timeout 20m ./engines 2>&1 | tee -a ../bin/bench-engines.out
	@$(GO) run ./internal/benchtable < bin/bench-engines.out
	@if grep -q '^FAIL' bin/bench-engines.out; then echo "make bench-engines: a benchmark or the file-size check failed (FAIL in bin/bench-engines.out)"; exit 1; fi

# The real engines against lakesink (interop/engines): Spark + Delta and
# delta-rs, installed by scripts/install-engines.sh (cached outside the repo),
# read and write what lakesink writes; the run rewrites docs/interop.md's
# results table. LAKESINK_REQUIRE_ENGINES=1 makes a missing engine fail.
# It first runs test-kafka (the consumer-group and real-broker tests against
# Apache Kafka), so one target runs every real engine.
interop: s3-server test-kafka
	./scripts/install-engines.sh
	eval "$$(./scripts/install-engines.sh --env)" && cd interop && \
		LAKESINK_ENGINES=1 LAKESINK_INTEROP_REPORT=$(CURDIR)/docs/interop.md \
		LAKESINK_CORPUS_REPORT=$(CURDIR)/reader/testdata/conformance.md \
		$(GO) test -count=1 -timeout 60m ./engines

clean:
	rm -rf bin demo
