// Package otelenv turns on OpenTelemetry tracing the standard way, from
// the OTEL_* environment variables, through the contrib autoexport
// package. It is its own package because the OTLP exporters bring gRPC and
// protobuf: only the deputy command links it, not every program that uses
// deputy as a library (those pass their own TracerProvider).
package otelenv

import (
	"context"
	"os"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER names an
// exporter other than "none". Without either, tracing stays off and costs
// nothing: autoexport alone would default to OTLP on localhost.
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
	exp, err := autoexport.NewSpanExporter(ctx)
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
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
