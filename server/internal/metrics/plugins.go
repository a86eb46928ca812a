package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workbench-dev/workbench/runtime"
)

// Descriptions of the plugin metrics.
var (
	callsDesc = prometheus.NewDesc("workbench_plugin_calls_total",
		"Tool calls of the loaded version of a plugin.", []string{"integration", "tool"}, nil)
	errorsDesc = prometheus.NewDesc("workbench_plugin_errors_total",
		"Failed tool calls by error code (at most 32 codes per tool, then OTHER).", []string{"integration", "tool", "code"}, nil)
	durationDesc = prometheus.NewDesc("workbench_plugin_call_duration_seconds",
		"Time of a tool call.", []string{"integration", "tool"}, nil)
	httpDesc = prometheus.NewDesc("workbench_plugin_http_requests_total",
		"Outbound HTTP requests a plugin made.", []string{"integration"}, nil)
	deniedDesc = prometheus.NewDesc("workbench_plugin_egress_denied_total",
		"Outbound requests refused by the egress policy.", []string{"integration"}, nil)
	instancesDesc = prometheus.NewDesc("workbench_plugin_instances",
		"Instances of a plugin, idle (pooled) or busy.", []string{"integration", "state"}, nil)
	memoryDesc = prometheus.NewDesc("workbench_plugin_memory_bytes",
		"Linear memory held by a plugin's instances.", []string{"integration"}, nil)
	infoDesc = prometheus.NewDesc("workbench_module_info",
		"The loaded version of each module (always 1).", []string{"integration", "version", "abi"}, nil)
	failedDesc = prometheus.NewDesc("workbench_modules_failed",
		"Modules that failed to load and are not serving.", nil, nil)
)

// pluginCollector reads the runtime's counters from the current snapshot at
// each scrape. A reload starts the counters of the new version at zero,
// which Prometheus treats as a counter reset.
type pluginCollector struct{ catalog Catalog }

func (pc pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{callsDesc, errorsDesc, durationDesc, httpDesc, deniedDesc, instancesDesc, memoryDesc, infoDesc, failedDesc} {
		ch <- d
	}
}

func (pc pluginCollector) Collect(ch chan<- prometheus.Metric) {
	snap := pc.catalog.Current()
	failed := 0
	for _, f := range snap.Failed() {
		if _, loaded := snap.Integration(f.Name); !loaded {
			failed++
		}
	}
	ch <- prometheus.MustNewConstMetric(failedDesc, prometheus.GaugeValue, float64(failed))
	for _, in := range snap.Integrations() {
		if in.Plugin == nil {
			continue
		}
		name, st := in.Name, in.Plugin.Stats()
		ch <- prometheus.MustNewConstMetric(infoDesc, prometheus.GaugeValue, 1, name, in.Manifest().Version, in.Plugin.ABI())
		ch <- prometheus.MustNewConstMetric(httpDesc, prometheus.CounterValue, float64(st.HTTPRequests), name)
		ch <- prometheus.MustNewConstMetric(deniedDesc, prometheus.CounterValue, float64(st.EgressDenied), name)
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(st.InstancesIdle), name, "idle")
		ch <- prometheus.MustNewConstMetric(instancesDesc, prometheus.GaugeValue, float64(st.InstancesBusy), name, "busy")
		ch <- prometheus.MustNewConstMetric(memoryDesc, prometheus.GaugeValue, float64(st.MemoryPages*64<<10), name)
		for tool, cs := range st.Tools {
			ch <- prometheus.MustNewConstMetric(callsDesc, prometheus.CounterValue, float64(cs.Calls), name, tool)
			for code, n := range cs.ErrorsByCode {
				ch <- prometheus.MustNewConstMetric(errorsDesc, prometheus.CounterValue, float64(n), name, tool, string(code))
			}
			ch <- histogram(cs.Latency, name, tool)
		}
	}
}

// histogram converts the runtime's histogram (a count per bucket) to a
// Prometheus one (cumulative counts by upper bound).
func histogram(h runtime.Histogram, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(runtime.LatencyBounds))
	var cumulative uint64
	for i, bound := range runtime.LatencyBounds {
		cumulative += h.Counts[i]
		buckets[bound] = cumulative
	}
	return prometheus.MustNewConstHistogram(durationDesc, h.Count, h.Sum.Seconds(), buckets, labels...)
}
