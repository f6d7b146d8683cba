package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/tools"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are what --metrics ADDR serves, in the Prometheus text format.
type metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	denials  *prometheus.CounterVec
	asked    prometheus.Counter
	answered *prometheus.CounterVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cordon_tool_calls_total",
			Help: "Tool calls, by tool and outcome (ok, error, or the error code in lower case)."}, []string{"tool", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cordon_tool_call_duration_seconds",
			Help: "How long tool calls took, by tool.", Buckets: prometheus.ExponentialBuckets(0.005, 4, 9)}, []string{"tool"}),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cordon_denials_total",
			Help: "Calls the sandbox or the file fence stopped, by tool."}, []string{"tool"}),
		asked: prometheus.NewCounter(prometheus.CounterOpts{Name: "cordon_approvals_asked_total",
			Help: "Questions put to the human (escalations and hosts)."}),
		answered: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cordon_approvals_answered_total",
			Help: "Questions answered, by decision."}, []string{"decision"}),
	}
	m.reg.MustRegister(m.calls, m.latency, m.denials, m.asked, m.answered,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cordon_sessions_live", Help: "Sessions open now."},
			func() float64 { return float64(len(s.liveSessions())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cordon_processes_live", Help: "Background processes running now."},
			func() float64 {
				n := 0
				for _, sess := range s.liveSessions() {
					n += sess.LiveProcesses()
				}
				return float64(n)
			}),
	)
	return m
}

// observe counts one call.
func (m *metrics) observe(tool string, took time.Duration, res *tools.Result, terr *tools.ToolError) {
	if m == nil {
		return
	}
	outcome := "ok"
	switch {
	case tools.IsPending(terr):
		outcome = "input_required"
	case terr != nil:
		outcome = strings.ToLower(terr.Code)
		if terr.Denied {
			m.denials.WithLabelValues(tool).Inc()
		}
	case res != nil && res.IsError:
		outcome = "error"
	}
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.latency.WithLabelValues(tool).Observe(took.Seconds())
}

func (m *metrics) question() {
	if m != nil {
		m.asked.Inc()
	}
}

func (m *metrics) answer(d approval.Answer) {
	if m != nil && d != "" {
		m.answered.WithLabelValues(string(d)).Inc()
	}
}

// liveSessions are the sessions open now.
func (s *Server) liveSessions() []*tools.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*tools.Session
	if s.closed {
		return nil
	}
	for _, sess := range s.sessions {
		out = append(out, sess)
	}
	for _, ts := range s.tokens {
		out = append(out, ts.sess)
	}
	if s.process != nil && !s.overHTTP.Load() {
		out = append(out, s.process)
	}
	return out
}

// ServeMetrics serves the Prometheus metrics at /metrics on addr, a
// listener of its own, until ctx ends. ready, if set, is told the bound
// address.
func (s *Server) ServeMetrics(ctx context.Context, addr string, ready func(string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	s.log.Info().Str("metrics_addr", ln.Addr().String()).Msg("serving Prometheus metrics at /metrics")
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
