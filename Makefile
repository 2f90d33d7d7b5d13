# fieldtap — see README.md. Every target builds with CGO_ENABLED=0.
export CGO_ENABLED := 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin
PKGS    := ./...
# Short fuzz runs in `make test`; longer ones with `make fuzz FUZZTIME=5m`.
FUZZTIME ?= 10s

.PHONY: build cross demo test unit fuzz bench bench-compare lint clean hwtest

build:
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/fieldtapd ./firmware/cmd/fieldtapd
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/fieldtap ./tools/cmd/fieldtap

cross:
	GOOS=linux GOARCH=arm64 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/linux-arm64/fieldtapd ./firmware/cmd/fieldtapd
	GOOS=linux GOARCH=arm GOARM=7 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/linux-armv7/fieldtapd ./firmware/cmd/fieldtapd
	@for f in $(BIN)/linux-arm64/fieldtapd $(BIN)/linux-armv7/fieldtapd; do \
		printf '%-32s %8d bytes  %s\n' $$f $$(stat -c %s $$f) "$$(file -b $$f 2>/dev/null | cut -d, -f1-2)"; \
	done

# The simulated box with HTTP MCP on 127.0.0.1:8731. Ctrl-C stops it.
demo: build
	@./scripts/demo-banner.sh
	@$(BIN)/fieldtapd --board sim --mcp-transport http --mcp-listen 127.0.0.1:8731

# Every test: lint, unit and end-to-end tests, and short fuzz runs of
# every parser, ending with one line `test: N passed, N failed`.
test:
	@./scripts/test.sh $(FUZZTIME)

unit:
	go test -count=1 $(PKGS)

fuzz:
	@./scripts/fuzz-all.sh $(FUZZTIME)

# The emulated board (docs/hardware-test.md): qemu-system-aarch64 with
# Debian's arm64 kernel, fieldtapd checked over MCP. First run installs
# qemu and fetches the arm64 packages (root, apt).
hwtest:
	./hwtest/run

# In-process benchmarks; the ones that need ../shared/testdata are named
# when they skip.
bench:
	@./scripts/bench.sh

# fieldtapd against tshark (SIP) and a python candump reader (CAN) on the
# same generated inputs, whole processes, interleaved, medians of RUNS
# (default 5); the table goes into docs/benchmarks.md. Minutes of CPU.
bench-compare:
	@./scripts/bench-compare.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(PKGS)
	@go mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }

clean:
	rm -rf $(BIN)
