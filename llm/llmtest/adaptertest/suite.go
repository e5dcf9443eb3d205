package adaptertest

import (
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// Model is the model name every suite request asks for; the fake echoes
// it back as the response's model.
const Model = "conformance-model"

// check is one behaviour of the suite.
type check struct {
	name string
	run  func(t *testing.T, a Adapter)
}

// checks are run in this order; each builds its own servers and providers,
// so any one can run alone with -run 'TestConformance/Name'.
var checks = []check{
	{"Text", testText},
	{"Params", testParams},
	{"ToolRoundTrip", testToolRoundTrip},
	{"StructuredOutput", testStructuredOutput},
	{"EmptyToolArguments", testEmptyToolArguments},
	{"RetryableFaults", testRetryableFaults},
	{"FinalFaults", testFinalFaults},
	{"StalledStream", testStalledStream},
	{"StalledPlainCall", testStalledPlainCall},
	{"UnansweredPlainCall", testUnansweredPlainCall},
	{"CancelMidStream", testCancelMidStream},
	{"ConnectionRefused", testConnectionRefused},
	{"NoRuleMatched", testNoRuleMatched},
	{"CustomName", testCustomName},
	{"InvalidRequests", testInvalidRequests},
	{"Headers", testHeaders},
	{"Environment", testEnvironment},
	{"HTTPClient", testHTTPClient},
	{"BaseURLSuffix", testBaseURLSuffix},
}

// Run checks every behaviour that all adapters share, each as a subtest
// of t. It does not call t.Parallel: the Environment check sets
// environment variables.
func Run(t *testing.T, a Adapter) {
	t.Helper()
	if a.New == nil || a.Path == nil || a.Name == "" || a.Protocol == "" || a.KeyHeader == "" {
		t.Fatal("adaptertest: Adapter needs New, Name, Protocol, Path and KeyHeader")
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(t, a) })
	}
}

// UserRequest is a request for Model with one user message.
func UserRequest(text string) *llm.Request {
	return &llm.Request{Model: Model, Messages: []llm.Message{llm.UserMessage(text)}}
}

// fitParams is a.FitParams(p), or p.
func (a Adapter) fitParams(p llm.Params) llm.Params {
	if a.FitParams != nil {
		return a.FitParams(p)
	}
	return p
}

// streamName names a subtest by its mode.
func streamName(stream bool) string {
	if stream {
		return "stream"
	}
	return "plain"
}
