package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

type otlpKey struct{}

// otlpReceiver is an OTLP/HTTP trace receiver on loopback: it decodes
// what deputy exports, as a collector would.
type otlpReceiver struct {
	started  bool
	mu       sync.Mutex
	requests int
	spans    []recvSpan
	service  []string
}

type recvSpan struct {
	id, parent, trace, name string
	attrs                   []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err == nil && r.URL.Path == "/v1/traces" {
		err = proto.Unmarshal(body, &req)
	} else if err == nil {
		err = fmt.Errorf("unexpected path %s", r.URL.Path)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests++
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				o.service = append(o.service, a.Value.GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				o.spans = append(o.spans, recvSpan{id: hex.EncodeToString(s.SpanId), parent: hex.EncodeToString(s.ParentSpanId),
					trace: hex.EncodeToString(s.TraceId), name: s.Name, attrs: attrStrings(s.Attributes)})
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func attrStrings(kvs []*commonpb.KeyValue) []string {
	var out []string
	for _, kv := range kvs {
		v := kv.Value
		var s string
		switch {
		case v.GetArrayValue() != nil:
			var parts []string
			for _, e := range v.GetArrayValue().Values {
				parts = append(parts, e.GetStringValue())
			}
			s = "[" + strings.Join(parts, ",") + "]"
		case v.GetValue() == nil:
		default:
			switch x := v.Value.(type) {
			case *commonpb.AnyValue_StringValue:
				s = x.StringValue
			case *commonpb.AnyValue_IntValue:
				s = fmt.Sprint(x.IntValue)
			case *commonpb.AnyValue_BoolValue:
				s = fmt.Sprint(x.BoolValue)
			case *commonpb.AnyValue_DoubleValue:
				s = fmt.Sprint(x.DoubleValue)
			}
		}
		out = append(out, kv.Key+"="+s)
	}
	slices.Sort(out)
	return out
}

// cmdOTLP drives an OTLP/HTTP receiver on 127.0.0.1:
//
//	otlp start    start it and point the standard OTEL_* variables at it
//	otlp spans    print each span received as one line, in tree order:
//	              indentation by nesting, the name, then its attributes;
//	              with the trace count and service name first
//	otlp count N  exactly N export requests arrived
func cmdOTLP(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: otlp start|spans|count")
	}
	if args[0] == "start" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		o := ts.Value(otlpKey{}).(*otlpReceiver)
		srv := &http.Server{Handler: o}
		go func() { _ = srv.Serve(ln) }()
		ts.Defer(func() { srv.Close() })
		o.started = true
		ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
		ts.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
		ts.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		ts.Setenv("OTEL_SERVICE_NAME", "deputy-test")
		return
	}
	o := ts.Value(otlpKey{}).(*otlpReceiver)
	if !o.started {
		ts.Fatalf("otlp: not started")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch args[0] {
	case "count":
		if len(args) != 2 {
			ts.Fatalf("usage: otlp count N")
		}
		if got := fmt.Sprint(o.requests); (got == args[1]) == neg {
			ts.Fatalf("otlp: %s export requests, want %s%s", got, map[bool]string{true: "not ", false: ""}[neg], args[1])
		}
	case "spans":
		traces := map[string]bool{}
		byID := map[string]recvSpan{}
		for _, s := range o.spans {
			traces[s.trace] = true
			byID[s.id] = s
		}
		fmt.Fprintf(ts.Stdout(), "traces %d service %s\n", len(traces), strings.Join(slices.Compact(o.service), ","))
		var walk func(parent string, depth int)
		walk = func(parent string, depth int) {
			for _, s := range o.spans {
				p := s.parent
				if _, ok := byID[p]; !ok {
					p = ""
				}
				if p == parent {
					fmt.Fprintf(ts.Stdout(), "%s%s %s\n", strings.Repeat("  ", depth), s.name, strings.Join(s.attrs, " "))
					walk(s.id, depth+1)
				}
			}
		}
		walk("", 0)
	default:
		ts.Fatalf("otlp: unknown subcommand %q", args[0])
	}
}
