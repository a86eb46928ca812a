package storetest

import "testing"

func testCurl(t *testing.T, h *harness) {}
