# Workbench developer targets. Go's build cache makes re-runs fast.

GO        ?= go
BIN       := bin/workbench
PDK_GO    := pdk/go

.PHONY: run build plugins test test-deps bench fuzz soak check

## run: build the plugins and the server, then serve on 127.0.0.1:8420
run: plugins build
	./$(BIN) serve

## build: the workbench binary in bin/
build:
	$(GO) build -trimpath -o $(BIN) ./cmd/workbench

## plugins: every built-in plugin in plugins-wasm/ to .wasm
plugins: test-deps
	tools/build-plugins.sh

## test-deps: install what the tests need (idempotent)
test-deps:
	tools/test-deps.sh

## test: every test, after installing what they need and building the plugins
test: test-deps plugins
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run TestInterrupt_differential ./runtime/
	cd $(PDK_GO) && $(GO) test -count=1 ./...
	for mod in plugins-wasm/*/go.mod; do (cd "$$(dirname "$$mod")" && $(GO) test -count=1 ./...) || exit 1; done

## bench: the benchmarks
bench: test-deps plugins
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: every fuzz target for FUZZ_TIME each (default 1m); make test runs their seed corpora
fuzz: test-deps plugins
	tools/fuzz.sh

## soak: 10 minutes of mixed traffic at up to 500 requests per second against a real server (make test runs 5 s at 50)
soak: test-deps plugins
	SOAK_DURATION=$${SOAK_DURATION:-10m} SOAK_RPS=$${SOAK_RPS:-500} $(GO) test -count=1 -v -run TestSoak -timeout 40m ./tools/soak/

## check: formatting, vet and a tidy go.mod
check:
	@unformatted=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd $(PDK_GO) && $(GO) vet ./...
	for mod in plugins-wasm/*/go.mod; do \
		[ -e "$$mod" ] || continue; \
		(cd "$$(dirname "$$mod")" && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...) || exit 1; \
	done
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum
