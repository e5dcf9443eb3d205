// Package anthropic is deputy's llm.Provider for Anthropic's Messages API,
// built on the official SDK (github.com/anthropics/anthropic-sdk-go).
//
// The adapter translates an llm.Request into one POST /v1/messages call:
//
//   - Request.System becomes the top-level "system" parameter.
//   - User and assistant messages become "user" and "assistant" turns; an
//     assistant's tool calls become tool_use blocks.
//   - Consecutive llm.RoleTool messages are grouped into ONE user turn of
//     tool_result blocks (with is_error), as the API requires the results of
//     one assistant turn to arrive together.
//   - Tools are passed with their JSON Schema unchanged as input_schema.
//   - An assistant turn is sent back from its State, the content blocks the
//     API returned for it (thinking and redacted_thinking blocks with their
//     signatures included), exactly as they came, when the request is for
//     the model that produced it, after the same prefix (state.go);
//     otherwise it is rebuilt from its text and tool calls.
//   - Params.Temperature is sent only when set (an explicit 0 is sent); the
//     engine leaves out what the model refuses (llm/capability).
//     max_tokens is required by the API: when Params.MaxTokens is nil the
//     adapter sends the model's output limit from llm/capability (128,000
//     for claude-sonnet-5-5), or DefaultMaxTokens (4096) for a model the
//     table does not know. (The engine sets Params.MaxTokens lower where a
//     budget has less left.)
//   - Params.Effort becomes the model's own control: output_config.effort
//     with adaptive thinking shown summarized, or a thinking budget
//     (effort.go).
//   - Cache breakpoints mark the last tool, the system prompt and the last
//     block of the last two user turns (cache.go).
//
// Generate with a nil StreamFunc sends a plain request, bounded by the
// SDK's own ten-minute limit for one; when max_tokens is so large that the
// SDK refuses a plain request, the adapter streams and reports nothing.
// Streams fail after Options.IdleTimeout without data (llm.StallError).
//
// A response's text blocks are the message's Content, its tool_use blocks
// its ToolCalls, the text of its thinking blocks (readable with display
// "summarized") its Reasoning, which a stream reports as
// llm.EventReasoningDelta, and all its blocks its State.
//
// Stop reasons map as end_turn/stop_sequence → stop, tool_use → tool_calls,
// max_tokens/model_context_window_exceeded → length, refusal →
// content_filter, anything else → other. Input usage counts every input
// token the request was billed for: plain input plus cache writes and reads;
// output usage's thinking tokens are its ReasoningTokens.
//
// The SDK stays on its v1 line (API version 2023-06-01): v2 speaks API
// version 2026-10-21, which refuses temperature, top_p and top_k on every
// model, Claude Haiku 4.5 and Sonnet 4.6 included, and sends the key as a
// bearer token that Anthropic-compatible servers do not all read; every
// field this adapter uses is the same in both.
//
// The SDK is configured so that deputy alone decides: its own retries are off
// (retry happens once, above the adapter, in llm.WithRetry) and its
// environment defaults are off, so no credential, profile or base URL comes
// from the environment; FromEnv is the single place where ANTHROPIC_API_KEY
// and ANTHROPIC_BASE_URL are read.
//
// Every error is an *llm.Error. HTTP statuses map through llm.KindForStatus
// (529 overloaded is a server error), Retry-After comes from the response's
// retry-after-ms or retry-after header, and an error event inside a stream is
// classified by its error type. A response body that is not valid JSON is
// KindBadRequest with the message "malformed response": the same request
// would most likely get the same answer, so it is not retried. Error texts
// carry the server's message, never a header of the request.
package anthropic
