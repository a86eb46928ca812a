package runtime_test

import (
	"github.com/workbench-dev/workbench/runtime"
	"github.com/workbench-dev/workbench/runtime/extism"
)

// Package runtime's own tests cannot import runtime/extism, which imports
// runtime; this external test file hands them the Extism ABI instead.
func init() { runtime.SetTestExtism(extism.ABI{}) }
