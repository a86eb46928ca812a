module github.com/workbench-dev/workbench/plugins-wasm/github

go 1.26.8

require github.com/workbench-dev/workbench/pdk/go v0.0.0

require github.com/google/jsonschema-go v0.4.3 // indirect

replace github.com/workbench-dev/workbench/pdk/go => ../../pdk/go
