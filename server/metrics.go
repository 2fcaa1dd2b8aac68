package server

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"quire/server/internal/api"
)

// httpMetrics are the API's request metrics, labelled by route template
// (never the raw path: ids would make a series per document).
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	// ratelimited counts the 429s of rate limits (ratelimits.go).
	ratelimited *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quire_http_requests_total",
			Help: "HTTP requests answered, by route template, method and status code.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "quire_http_request_duration_seconds",
			Help: "Time to answer HTTP requests (streamed bodies excluded), by route template and method.",
			// From a cached folder listing to a large upload.
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "quire_http_requests_in_flight",
			Help: "HTTP requests being answered.",
		}),
	}
	m.ratelimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quire_ratelimited_total",
		Help: "Requests refused with 429 by a rate limit of the routes that need no token, by route template.",
	}, []string{"route"})
	reg.MustRegister(m.requests, m.duration, m.inFlight, m.ratelimited)
	return m
}

func (m *httpMetrics) observe(c *fiber.Ctx, took time.Duration) {
	// c.Method() aliases fasthttp's reused buffer; a label kept by the
	// registry must be a copy.
	route, method := api.RouteName(c), strings.Clone(c.Method())
	m.requests.WithLabelValues(route, method, strconv.Itoa(c.Response().StatusCode())).Inc()
	m.duration.WithLabelValues(route, method).Observe(took.Seconds())
}

// metricsHandler serves GET /metrics on the API listener: 404 when a
// listener of its own serves it (metrics.listen).
// The handler is made on the first request, so that the route table can
// be read from a Server that serves nothing (tests list its rows).
func (s *Server) metricsHandler() fiber.Handler {
	var once sync.Once
	var h fiber.Handler
	return func(c *fiber.Ctx) error {
		if s.Deps.MetricsElsewhere {
			return c.Status(http.StatusNotFound).JSON(api.MessageBody{Message: "/metrics is served on the metrics listener (metrics.listen)"})
		}
		once.Do(func() { h = adaptor.HTTPHandler(s.MetricsHTTP()) })
		return h(c)
	}
}

// MetricsHTTP serves the Prometheus text format, behind the bearer token
// when one is set (metrics.token): the handler of both the API listener's
// /metrics and the metrics listener.
func (s *Server) MetricsHTTP() http.Handler {
	prom := promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{
		ErrorLog:      promLogger{s},
		ErrorHandling: promhttp.ContinueOnError,
	})
	want := []byte("Bearer " + s.Deps.MetricsToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Deps.MetricsToken != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="quire metrics"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"Unauthorized"}`))
			return
		}
		prom.ServeHTTP(w, r)
	})
}

type promLogger struct{ s *Server }

func (p promLogger) Println(v ...any) { p.s.Log.Warn("metrics", "err", v) }
