# fieldtap — see README.md. Every target builds with CGO_ENABLED=0.
export CGO_ENABLED := 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
BIN     := bin
PKGS    := ./...
# The largest linux/arm64 fieldtapd `make cross` accepts, in bytes: the
# 20 MB of issue #39 (18,940,066 when set; docs/benchmarks.md says where
# the bytes go).
MAXSIZE_ARM64 := 20000000
# Short fuzz runs in `make test`; longer ones with `make fuzz FUZZTIME=5m`.
# Five seconds a target: with 89 targets and about 3.5 s of start-up
# each, 10 s made the fuzz phase 20 minutes of CI's 50 on a 2-vCPU VM.
FUZZTIME ?= 5s
# staticcheck 2026.2.2, a release built for Go 1.26 (its go.mod asks for
# it), fetched from the module proxy and pinned so a new check cannot
# fail CI on a commit that did not change.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build cross demo test unit race fuzz bench bench-compare lint clean hwtest

build:
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/fieldtapd ./firmware/cmd/fieldtapd
	go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/fieldtap ./tools/cmd/fieldtap

cross:
	GOOS=linux GOARCH=arm64 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/linux-arm64/fieldtapd ./firmware/cmd/fieldtapd
	GOOS=linux GOARCH=arm GOARM=7 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/linux-armv7/fieldtapd ./firmware/cmd/fieldtapd
	@for f in $(BIN)/linux-arm64/fieldtapd $(BIN)/linux-armv7/fieldtapd; do \
		printf '%-32s %8d bytes  %s\n' $$f $$(stat -c %s $$f) "$$(file -b $$f 2>/dev/null | cut -d, -f1-2)"; \
	done
	@# The arm64 daemon stays within 20 MB (issue #39); scripts/binsize.sh
	@# says where the bytes go (docs/benchmarks.md).
	@arm64=$$(stat -c %s $(BIN)/linux-arm64/fieldtapd); armv7=$$(stat -c %s $(BIN)/linux-armv7/fieldtapd); \
	if [ $$arm64 -gt $(MAXSIZE_ARM64) ]; then \
		echo "cross: linux/arm64 fieldtapd is $$arm64 bytes, over the $(MAXSIZE_ARM64)-byte limit (linux/armv7: $$armv7 bytes)"; exit 1; \
	fi; \
	echo "cross: linux/arm64 fieldtapd $$arm64 bytes, within $(MAXSIZE_ARM64); linux/armv7 $$armv7 bytes (no limit)"
	@# Every package and its tests type-check on both boards: a constant
	@# that overflows a 32-bit int fails here, not on the bench.
	GOOS=linux GOARCH=arm64 go vet $(PKGS)
	GOOS=linux GOARCH=arm GOARM=7 go vet $(PKGS)

# The simulated box with HTTP MCP on 127.0.0.1:8731 and a transmit to
# rehearse (scripts/demo.toml). Ctrl-C stops it.
demo: build
	@mkdir -p /tmp/fieldtap-demo
	@./scripts/demo-banner.sh
	@$(BIN)/fieldtapd --config scripts/demo.toml --mcp-transport http --mcp-listen 127.0.0.1:8731

# Every test: lint, unit and end-to-end tests, every benchmark once, and
# short fuzz runs of every parser, ending with one line
# `test: N passed, N failed`.
test:
	@./scripts/test.sh $(FUZZTIME)

unit:
	go test -count=1 $(PKGS)

# Every package's tests under the race detector; cgo only for the test
# binaries (the race runtime needs it), the product stays CGO-free.
race:
	@./scripts/race.sh

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
	go run $(STATICCHECK) $(PKGS)
	@go mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }

clean:
	rm -rf $(BIN)
