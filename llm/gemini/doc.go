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
// adapter then makes one up, "call_<random>_<n>", with a random part per
// Provider and n counting up, so IDs stay unique across the conversations
// one Provider serves and across processes (a resumed run). Such IDs are
// not sent back to the server: the turn's state (below) says which calls
// came without one.
//
// Provider state (ai.google.dev/gemini-api/docs/thought-signatures, read
// 2026-11-28): thinking models attach an opaque thoughtSignature to parts of
// an answer (the first function call of a step, else the last part), and
// Gemini 3 refuses (4xx) a request whose current turn lost a call's
// signature. The adapter keeps the answer's parts as they came, thought
// signatures and thought summaries included, in Message.State (format
// llm.StateGemini, Data the parts' JSON; a stream's text pieces joined, each
// signature on the text it ends), which the ledger records, runs resume
// reads back and Temporal carries, and sends them back exactly. A state is
// not sent when it was made by another model or no longer says what the
// message says; that turn, like one from another provider or a ledger from
// before deputy kept state, is rebuilt from its text and calls, and its
// first call carries the bypass value Google documents for histories not
// produced by Gemini, except for gemini-1.x and gemini-2.x models, which do
// not check signatures.
//
// Thinking (the thinking page and llm/capability, read 2026-11-28): a model
// the capability table says thinks is asked for its thought summaries
// (includeThoughts), which become Message.Reasoning and stream as
// llm.EventReasoningDelta, never answer text. Params.Effort is Gemini 3's
// thinkingLevel as is, and on Gemini 2.5 a thinkingBudget: 1,024, 8,192 or
// 24,576 tokens for low, medium and high (the budgets Google's OpenAI
// compatibility layer maps reasoning_effort to), within the model's range.
// Usage.ReasoningTokens is thoughtsTokenCount.
//
// Web search (search.go): on Gemini 3 and later a spec with Server is
// Grounding with Google Search, beside the function declarations, with
// toolConfig.includeServerSideToolInvocations; the search's toolCall and
// toolResponse parts and the grounding metadata are kept in State, the
// pages the grounding cites end the answer's text, and the queries run are
// Usage.WebSearches. ServerTools lists no allowed domains: Gemini's search
// has none.
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
