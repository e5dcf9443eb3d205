// Package adaptertest is a conformance suite for deputy's provider
// adapters (llm/openai, llm/anthropic, llm/gemini, and any later one). It
// holds every behaviour the adapters must share, checked the same way for
// each against the llmtest fake server over loopback: plain and streamed
// text, usage, a whole tool-call round trip read back from the server's
// request log, sampling parameters, each scripted fault class with and
// without llm.WithRetry, stalls, cancellation, refused connections, local
// refusal of invalid requests, options that must win over the environment,
// and that no API key ever shows in an error.
//
// An adapter's test calls
//
//	func TestConformance(t *testing.T) { adaptertest.Run(t, adapter) }
//
// with an Adapter that says how to build its provider (a Factory) and what
// its wire looks like (protocol, paths, auth header, defaults). The
// adapter's own tests then keep only what is specific to its wire format.
//
// The package also has the small helpers those tests share: a stream
// Recorder, JSON comparison, an error-kind assertion that also checks for
// leaked keys, a bounded test context, and a raw loopback server for wire
// shapes the fake does not produce. Like net/http/httptest it is test
// equipment that imports testing; only test files should import it.
package adaptertest
