// Package gemini is deputy's llm.Provider for the Gemini API (Google AI, not
// Vertex), built on the official SDK (google.golang.org/genai).
//
// The adapter translates an llm.Request into one generateContent (or
// streamGenerateContent) call:
//
//   - Request.System becomes the systemInstruction.
//   - User messages are "user" contents, assistant messages "model"
//     contents; an assistant's tool calls are functionCall parts.
//   - Consecutive llm.RoleTool messages become one "user" content of
//     functionResponse parts, with response {"output": text}, or
//     {"error": text} when IsError is set. The function's name is the
//     message's ToolName, else the name of the call with that ID, else the
//     call in the same position of the preceding assistant message.
//   - Tools become FunctionDeclarations whose JSON Schema is passed
//     unchanged as parametersJsonSchema.
//   - Params.Temperature and Params.MaxTokens (maxOutputTokens) are sent only
//     when set; an explicit temperature 0 is sent.
//
// Tool call IDs: Gemini often returns function calls without an id. The
// adapter then makes one up, "call_<n>" with n counting up per Provider, so
// IDs stay unique across the concurrent conversations one Provider serves.
// The Provider remembers which IDs it made up and does not send those back
// to the server; IDs the server gave are sent back on the functionCall and
// functionResponse parts.
//
// Thought signatures: thinking models (Gemini 3 and later) attach an opaque
// thoughtSignature to function calls and refuse a follow-up request whose
// history lacks it. llm.ToolCall has no field for it, so the Provider keeps
// the signatures it received in a bounded in-memory table keyed by call ID
// and puts them back when the call is replayed. When it has none (history
// from another process, or evicted), the first call of the turn carries the
// bypass value Google documents for histories not produced by Gemini, except
// for gemini-1.x and gemini-2.x models, which do not check signatures.
//
// Finish reasons map as STOP → stop (tool_calls when the answer has function
// calls), MAX_TOKENS → length, the safety family (SAFETY, RECITATION,
// BLOCKLIST, PROHIBITED_CONTENT, SPII, and a blocked prompt) →
// content_filter, anything else → other. Output usage counts candidate and
// thinking tokens.
//
// The SDK is configured so that deputy alone decides: its retries and
// automatic continuation are off (retry happens once, above the adapter, in
// llm.WithRetry), and the API key and base URL are always passed explicitly,
// so the SDK's own reading of GEMINI_API_KEY, GOOGLE_API_KEY and
// GOOGLE_GEMINI_BASE_URL never decides anything. FromEnv is the place that
// reads the environment. New refuses an empty API key: the SDK would fall
// back to the environment otherwise.
//
// Every error is an *llm.Error. HTTP statuses map through llm.KindForStatus
// (the gRPC-style status names when no code is given), Retry-After comes from
// the response's retry-after-ms or retry-after header, else from a RetryInfo
// detail in the error body. A response that is not valid JSON is
// KindBadRequest "malformed response" and is not retried. Error texts carry
// the server's message, never the API key.
package gemini
