module github.com/workbench-dev/workbench/pdk/go

go 1.26.8
