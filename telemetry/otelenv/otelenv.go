// Package otelenv turns on OpenTelemetry tracing the standard way, from
// the OTEL_* environment variables. It is its own package because the OTLP
// exporters bring gRPC and protobuf: only the deputy command links it, not
// every program that uses deputy as a library (those pass their own
// TracerProvider).
//
// It links the three trace exporters the variables can name (OTLP over
// HTTP or gRPC, and the console) and nothing more: the contrib autoexport
// package, which chooses among the same ones, also links the metric and log
// exporters and Prometheus, whose package initialisation cost every deputy
// command about 4 ms of start-up (bench/NOTES.md, "Start-up").
package otelenv

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER names an
// exporter other than "none". Without either, tracing stays off and costs
// nothing: the exporters alone would default to OTLP on localhost.
func Enabled() bool {
	if e := os.Getenv("OTEL_TRACES_EXPORTER"); e != "" {
		return e != "none"
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Provider builds a TracerProvider from the environment (exporter,
// endpoint, protocol, headers; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES, service.name defaulting to "deputy"). Call its
// Shutdown before the process exits, so the last spans are sent.
func Provider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	exp, err := exporter(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(
		resource.NewSchemaless(semconv.ServiceName("deputy")),
		resource.Environment(),
	)
	if err != nil {
		res = resource.Environment()
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if exp != nil {
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}

// exporter is the span exporter OTEL_TRACES_EXPORTER names: "otlp" (the
// default) over the protocol OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL names ("http/protobuf", the default, or
// "grpc"), "console", or "none" (nil: no exporter). The OTLP exporters read the rest of their
// OTEL_EXPORTER_OTLP_* settings (endpoint, headers, timeout, TLS,
// compression) themselves.
func exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	switch name := os.Getenv("OTEL_TRACES_EXPORTER"); name {
	case "", "otlp":
		proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if proto == "" {
			proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		switch proto {
		case "", "http/protobuf":
			return otlptracehttp.New(ctx)
		case "grpc":
			return otlptracegrpc.New(ctx)
		default:
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: deputy sends traces over \"http/protobuf\" or \"grpc\"", proto)
		}
	case "console":
		return stdouttrace.New()
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %q: deputy knows \"otlp\", \"console\" and \"none\"", name)
	}
}

// HeaderValues returns the values of the headers OTEL_EXPORTER_OTLP_HEADERS
// and OTEL_EXPORTER_OTLP_TRACES_HEADERS send ("k=v,k2=v2", values
// URL-encoded), both as written and decoded: credentials, which no error
// may show. A collector may echo them back in the body of a refusal, and
// the exporters put that body in their errors.
func HeaderValues() []string {
	var out []string
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range strings.Split(os.Getenv(name), ",") {
			_, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			out = append(out, v)
			if dec, err := url.PathUnescape(v); err == nil {
				out = append(out, dec)
			}
		}
	}
	return out
}
