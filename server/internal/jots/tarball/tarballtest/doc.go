// Package tarballtest builds gzip tarballs for tests, hostile ones
// included: links, devices, traversal, and gzip bombs generated on the fly.
package tarballtest
