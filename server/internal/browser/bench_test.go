package browser

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/workbench-dev/workbench/toolcall"
)

// BenchmarkManager_Acquire_cold measures a cold spawn: a new user's first
// Acquire, from nothing to a browser with an attached tab, and reports the
// proportional memory (PSS) of one idle session's process tree.
func BenchmarkManager_Acquire_cold(b *testing.B) {
	var pss int64
	n := 0
	for b.Loop() {
		b.StopTimer()
		m, err := NewManager(Options{Dir: b.TempDir(), NoSandbox: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		sess, release, err := m.Acquire(context.Background(), "bench")
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		pss += treePSS(b, chromedp.FromContext(sess.tab).Browser.Process().Pid)
		n++
		release()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(pss)/float64(n)/(1<<20), "MiB-PSS/idle-session")
}

// BenchmarkManager_Call_getText measures a warm tool call: browser_get_text
// on a loaded page, against the baseline of a bare evaluation of
// document.title on the same tab.
func BenchmarkManager_Call_getText(b *testing.B) {
	url := pages.URL + "/bench"
	mux.HandleFunc("/bench", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<title>bench</title><p>"+strings.Repeat("word ", 2000)+"</p><a href=/x>x</a>")
	})
	ctx := context.Background()
	if _, err := shared.Call(ctx, toolcall.Call{Tool: ToolNavigate, UserID: "bench", Input: []byte(`{"url":"` + url + `"}`)}); err != nil {
		b.Fatal(err)
	}
	b.Run("baseline=evaluate", func(b *testing.B) {
		sess, release, err := shared.Acquire(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer release()
		for b.Loop() {
			if _, err := chromedp.Run(sess.tab, chromedp.Evaluate[string]("document.title")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get_text", func(b *testing.B) {
		for b.Loop() {
			if _, err := shared.Call(ctx, toolcall.Call{Tool: ToolGetText, UserID: "bench", Input: []byte(`{}`)}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// treePSS sums the PSS of pid and its descendants, in bytes.
func treePSS(b *testing.B, pid int) int64 {
	b.Helper()
	total := int64(0)
	if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total += kb << 10
			}
		}
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, c := range strings.Fields(string(children)) {
			if child, err := strconv.Atoi(c); err == nil {
				total += treePSS(b, child)
			}
		}
	}
	return total
}
