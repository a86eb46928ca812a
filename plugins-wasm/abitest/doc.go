// Package abitest holds the cross-language ABI conformance test: it builds
// the conformance plugin of every plugin kit (pdk/go, pdk/c, pdk/rust,
// pdk/assemblyscript), loads all four into one runtime host and checks that
// each host import and each error path gives the same outcome in every
// language. It has no code outside its tests.
package abitest
