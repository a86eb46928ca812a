//go:build unix

package fiberfix

import (
	"errors"
	"syscall"
)

// peerClosed peeks at one byte without blocking or consuming it.
func peerClosed(fd uintptr) bool {
	var b [1]byte
	for {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK):
			return false
		case err != nil:
			return true
		default:
			return n == 0
		}
	}
}
