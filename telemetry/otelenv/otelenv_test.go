package otelenv

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// Tracing is off unless the environment names an endpoint or an exporter.
func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
	} {
		for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
			t.Setenv(k, c.env[k])
		}
		if got := Enabled(); got != c.want {
			t.Errorf("Enabled() with %v = %v, want %v", c.env, got, c.want)
		}
	}
}

// What tracing costs a run when the variables are unset: this check.
func BenchmarkEnabledUnset(b *testing.B) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		b.Setenv(k, "")
	}
	for b.Loop() {
		if Enabled() {
			b.Fatal("enabled")
		}
	}
}

// The exporter is the one the variables name; a name or protocol deputy
// does not know is an error that says which, not a silent default.
func TestExporterChoice(t *testing.T) {
	for _, c := range []struct {
		exporter, protocol string
		want               string // type of the exporter, "" for none, "error: ..." for an error
	}{
		{"", "", "*otlptrace.Exporter"},
		{"otlp", "http/protobuf", "*otlptrace.Exporter"},
		{"otlp", "grpc", "*otlptrace.Exporter"},
		{"console", "", "*stdouttrace.Exporter"},
		{"none", "", ""},
		{"otlp", "http/json", `error: OTEL_EXPORTER_OTLP_PROTOCOL "http/json"`},
		{"zipkin", "", `error: OTEL_TRACES_EXPORTER "zipkin"`},
	} {
		t.Setenv("OTEL_TRACES_EXPORTER", c.exporter)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.protocol)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		exp, err := exporter(context.Background())
		got := ""
		switch {
		case err != nil:
			got = "error: " + err.Error()
		case exp != nil:
			got = fmt.Sprintf("%T", exp)
			_ = exp.Shutdown(context.Background())
		}
		if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("OTEL_TRACES_EXPORTER=%q protocol %q: got %s, want %s", c.exporter, c.protocol, got, c.want)
		}
	}
}
