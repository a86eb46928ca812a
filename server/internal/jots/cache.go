package jots

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"github.com/workbench-dev/workbench/server/internal/store"
)

// site is one jot as serving sees it: its row and file list at one
// version. It is immutable but for checked.
type site struct {
	jot     store.Jot
	files   map[string]store.JotFile
	checked atomic.Int64 // unix nanoseconds of the last check against the store
}

// siteCache holds sites by name and file contents by sha256 (so a cached
// content is never stale), the contents in an LRU bounded by bytes.
type siteCache struct {
	mu    sync.RWMutex
	sites map[string]*site

	cmu      sync.Mutex
	contents map[string]*list.Element // sha256 -> element of lru holding *content
	lru      *list.List
	bytes    int64
	maxBytes int64
}

type content struct {
	sha  string
	data []byte
}

// maxSites bounds the cached site entries (their file lists).
const maxSites = 4096

func newSiteCache(maxBytes int64) *siteCache {
	return &siteCache{sites: map[string]*site{}, contents: map[string]*list.Element{}, lru: list.New(), maxBytes: maxBytes}
}

func (c *siteCache) site(name string) *site {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sites[name]
}

func (c *siteCache) put(name string, s *site) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sites[name]; !ok && len(c.sites) >= maxSites {
		for k := range c.sites { // drop an arbitrary entry
			delete(c.sites, k)
			break
		}
	}
	c.sites[name] = s
}

// forget drops a jot's entry: the next request rereads it.
func (c *siteCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sites, name)
}

func (c *siteCache) content(sha string) ([]byte, bool) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	e, ok := c.contents[sha]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*content).data, true
}

func (c *siteCache) putContent(sha string, data []byte) {
	if int64(len(data)) > c.maxBytes/8 { // a few huge files would flush everything else
		return
	}
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if _, ok := c.contents[sha]; ok {
		return
	}
	c.contents[sha] = c.lru.PushFront(&content{sha: sha, data: data})
	c.bytes += int64(len(data))
	for c.bytes > c.maxBytes {
		last := c.lru.Back()
		old := last.Value.(*content)
		c.lru.Remove(last)
		delete(c.contents, old.sha)
		c.bytes -= int64(len(old.data))
	}
}

func (s *site) fresh(now time.Time, recheck time.Duration) bool {
	return recheck > 0 && now.UnixNano()-s.checked.Load() < int64(recheck)
}
