// Package githubtest holds a fake GitHub REST API and the tests that run the
// built GitHub plugin (../github/github.wasm) against it inside the runtime.
//
// The fake listens on 127.0.0.1 only and keeps everything in memory. It is
// test support: nothing outside tests imports it.
package githubtest
