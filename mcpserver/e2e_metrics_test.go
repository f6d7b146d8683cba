//go:build linux

package mcpserver_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// scrape reads /metrics with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	var resp *http.Response
	require.True(t, eventually(func() bool {
		var err error
		resp, err = http.Get("http://" + addr + "/metrics")
		return err == nil
	}), "the metrics listener answers")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// sample is the value of the family's metric whose labels include labels.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		match := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
				match++
			}
		}
		if match != len(labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue()
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}

// TestMetrics: --metrics serves the Prometheus text format, which the
// real parser reads, and the counters move as calls are made.
func TestMetrics(t *testing.T) {
	w := newWorld(t)
	addr := freeAddr(t)
	url, token, _ := w.httpServer(t, "--metrics", addr, "--mode", "workspace-write")
	before := scrape(t, addr)
	okBash := map[string]string{"tool": "bash", "outcome": "ok"}

	cs := connectHTTP(t, url, token, clientOpts{version: "2025-11-25"})
	call(t, cs, "bash", map[string]any{"command": "echo hi"})
	res := call(t, cs, "bash", map[string]any{"command": "echo x > " + w.outsideFile})
	require.True(t, res.IsError, text(res))
	marker := fmt.Sprintf("metrics-bg-%d", time.Now().UnixNano())
	startBackground(t, cs, map[string]any{"command": "sleep 600 # " + marker})

	after := scrape(t, addr)
	assert.Equal(t, sample(before, "cordon_tool_calls_total", okBash)+2, sample(after, "cordon_tool_calls_total", okBash), "two bash calls went well")
	assert.Greater(t, sample(after, "cordon_denials_total", map[string]string{"tool": "bash"}), sample(before, "cordon_denials_total", map[string]string{"tool": "bash"}), "a denial is counted")
	assert.GreaterOrEqual(t, sample(after, "cordon_tool_call_duration_seconds", map[string]string{"tool": "bash"}), 3.0)
	assert.GreaterOrEqual(t, sample(after, "cordon_sessions_live", nil), 1.0)
	assert.Equal(t, 1.0, sample(after, "cordon_processes_live", nil))
	for _, name := range []string{"cordon_approvals_asked_total", "cordon_approvals_answered_total"} {
		_, ok := after[name]
		assert.True(t, ok || name == "cordon_approvals_answered_total", name) // a vector shows no sample until its first answer
	}
	call(t, cs, "process_kill", map[string]any{"process_id": "p1", "signal": "KILL"})
	assert.True(t, eventually(func() bool { return sample(scrape(t, addr), "cordon_processes_live", nil) == 0 }))
}
