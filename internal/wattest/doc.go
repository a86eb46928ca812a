// Package wattest compiles hand-written WAT test fixtures into wasm with
// wat2wasm (Debian's wabt, which `make test` installs). It is test support
// only: no production code may import it.
package wattest
