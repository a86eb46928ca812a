module github.com/workbench-dev/workbench/plugins-wasm/conformance

go 1.26.8

require github.com/workbench-dev/workbench/pdk/go v0.0.0

replace github.com/workbench-dev/workbench/pdk/go => ../../pdk/go
