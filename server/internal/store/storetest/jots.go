package storetest

import "testing"

func testJots(t *testing.T, h *harness) {}
