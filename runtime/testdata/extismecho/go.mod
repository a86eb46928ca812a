module github.com/workbench-dev/workbench/runtime/testdata/extismecho

go 1.26.8

require github.com/extism/go-pdk v1.1.3
