package pdk

// maxInputBytes caps one wb_alloc request. The host's own input limit is
// 4 MiB (docs/abi.md section 7); anything far beyond it is refused with 0
// instead of letting the Go runtime abort on an impossible allocation.
const maxInputBytes = 64 << 20

// inputs holds the buffers handed out by wb_alloc until a tool takes them.
var inputs pinnedInputs

// pinnedInputs keeps input buffers reachable from a global, so the garbage
// collector cannot free them between wb_alloc and the tool call that reads
// them. There is one per call (a slice, not a map: a map costs a call
// several microseconds in wasm).
type pinnedInputs struct {
	mu   exportMutex
	bufs []pinnedInput
}

// pinnedInput is one buffer handed out by wb_alloc.
type pinnedInput struct {
	key uint32
	buf []byte
}

// alloc returns the address of a new buffer of size bytes, or 0.
func (p *pinnedInputs) alloc(size uint32) uint32 {
	if size > maxInputBytes {
		return 0
	}
	buf := make([]byte, size, max(size, 1))
	key := bufferKey(buf[:1])
	p.mu.Lock()
	p.bufs = append(p.bufs, pinnedInput{key: key, buf: buf})
	p.mu.Unlock()
	return key
}

// find returns the pinned buffer at ptr, or nil. The caller holds p.mu.
func (p *pinnedInputs) find(ptr uint32) []byte {
	for _, in := range p.bufs {
		if in.key == ptr {
			return in.buf
		}
	}
	return nil
}

// take hands the buffer at ptr to the caller and unpins it, together with
// any buffer left behind by an earlier call that never ran. ptr 0 with size 0
// is the empty input.
func (p *pinnedInputs) take(ptr, size uint32) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	buf := p.find(ptr)
	clear(p.bufs)
	p.bufs = p.bufs[:0]
	if ptr == 0 && size == 0 {
		return nil, true
	}
	if buf == nil || uint64(size) > uint64(len(buf)) {
		return nil, false
	}
	return buf[:size], true
}

// wbAlloc is the wb_alloc export: the host asks for size bytes to copy the
// input of the next call into.
//
//go:wasmexport wb_alloc
func wbAlloc(size uint32) uint32 {
	return inputs.alloc(size)
}

// manifestExport is the manifest export.
//
//go:wasmexport manifest
func manifestExport() uint32 {
	out, err := ManifestJSON()
	if err != nil {
		hostOutputSet(encodeError(toolError(err)))
		return statusError
	}
	hostOutputSet(out)
	return statusOK
}
