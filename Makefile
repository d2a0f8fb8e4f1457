# lakesink — see README.md. Every target works on a fresh machine with Go installed.
GO      ?= go
BIN     := bin/lakesink
PKGS    := ./...
export GOFLAGS ?= -buildvcs=false

.PHONY: all build test test-short bench demo lint fuzz soak clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/lakesink

# All unit and integration tests (seed corpora of the fuzz targets included).
test: build
	$(GO) test -count=1 -timeout 20m $(PKGS)
	cd interop && $(GO) test -count=1 ./...

test-short:
	$(GO) test -short -count=1 $(PKGS)

# Benchmarks of every package, then one summary table (figure, lakesink,
# baseline, ratio) collected from the "BENCHROW" lines the benchmarks print.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m $(PKGS) 2>&1 | tee bin/bench.out
	@$(GO) run ./internal/benchtable < bin/bench.out

demo: build
	./scripts/demo.sh

lint:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fuzz:
	./scripts/fuzz.sh

soak:
	LAKESINK_SOAK=1 $(GO) test -count=1 -timeout 60m -run 'Soak' $(PKGS)

clean:
	rm -rf bin demo
