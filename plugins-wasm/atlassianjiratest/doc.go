// Package atlassianjiratest holds a fake Jira Cloud REST API v3 and the
// tests that run the built atlassian-jira plugin
// (../atlassian-jira/atlassian-jira.wasm) and the Rust PDK's conformance
// plugin (../../pdk/rust/conformance) inside the runtime. It also runs the
// Rust unit tests of the PDK and the plugin natively.
//
// The fake listens on 127.0.0.1 only and keeps everything in memory. It is
// test support: nothing outside tests imports it.
package atlassianjiratest
