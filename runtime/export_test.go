package runtime

// testExtism is the Extism ABI that newTestHost gives every test host; set
// by extism_hook_test.go.
var testExtism ABI

// SetTestExtism sets the Extism ABI of the tests' hosts.
func SetTestExtism(a ABI) { testExtism = a }
