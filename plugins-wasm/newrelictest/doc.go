// Package newrelictest tests the C plugin kit (pdk/c) and the New Relic
// plugin written with it (plugins-wasm/newrelic).
//
// It holds Fake, a local NerdGraph (New Relic's GraphQL API) that parses,
// validates and executes the GraphQL it receives and checks the API-Key
// header, and the tests that load the built newrelic.wasm and the kit's
// conformance plugin into the real runtime. It also compiles and runs the
// kit's native unit tests with gcc. Nothing here reaches the network: every
// server is on 127.0.0.1, and region tests stop at name resolution.
package newrelictest
