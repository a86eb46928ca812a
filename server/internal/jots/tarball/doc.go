// Package tarball extracts an untrusted gzip-compressed tar stream into
// memory, safely: it refuses anything but regular files and directories,
// paths that are absolute, unclean or escape with "..", paths equal
// ignoring case, truncated streams and trailing garbage, and it enforces
// its limits while it streams, so a gzip bomb stops at the limit. It knows
// nothing of jots, HTTP or the store.
package tarball
