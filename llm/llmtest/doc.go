// Package llmtest is deputy's test equipment for language models: a script
// format that says how a fake model answers, an in-process Provider that
// plays a script, and a fake HTTP server that plays it in the real wire
// formats of OpenAI (chat completions, also Ollama's /v1), Anthropic
// (messages) and Gemini (generateContent), streaming included.
//
// Nothing here reaches the network: the server listens on loopback only
// unless told otherwise. The package imports no provider SDK; the
// adapters' tests import it, not the other way round.
//
// # Scripts
//
// A script is a YAML file (JSON works too, being YAML). It is a list of
// rules under the key "rules". For every request the rules are tried in
// order, and the first rule that matches and still has uses left answers:
//
//	strict: true                        # optional; see "Strict mode" below
//	rules:
//	  - name: lead-delegates            # optional; shows in the request log
//	    match:                          # every field optional; all given must hold
//	      model: "^lead"                # regexp on the model name
//	      system: "team lead"           # regexp on the system prompt
//	      last: "summarize"             # regexp on the content of the last message
//	      last_role: user               # user | assistant | tool
//	      tool: call_agent              # the request offers a tool of this name
//	      no_tool: call_agent           # the request does not offer this tool
//	      any: "secret word"            # regexp on the content of any message
//	      turn: 2                       # exactly turn-1 assistant messages so far (1 = first call)
//	    reply:
//	      text: "Done: {{ .LastUser }}"
//	      reasoning: "Weighing {{ .LastUser }}"   # optional; the summary of the model's thinking
//	      tool_calls:
//	        - name: call_agent
//	          id: ""                    # optional; generated when empty
//	          arguments: {agent: researcher, task: "Find facts about {{ .LastUser }}"}
//	      usage: {input_tokens: 12, output_tokens: 7}   # optional
//	      finish: stop                  # optional
//	    latency: 150ms                  # wait before answering
//	    chunk_delay: 5ms                # wait between stream chunks
//	    fault: rate_limit               # act out a failure instead of replying
//	    retry_after: 1                  # seconds, with fault: rate_limit
//	    times: 1                        # answer this many requests; 0 = no limit
//
// Regexps use Go's syntax (package regexp) and are unanchored: "^lead"
// matches "lead-model", "lead" matches "my-lead-model". A request without
// messages has an empty last message and no last role.
//
// Parsing is strict: an unknown key, a bad regexp or template, an unknown
// role, fault or finish reason, or a negative count is an error naming the
// rule ("rule 2 (lead-delegates)", numbered from 1) and, for unknown keys,
// the line.
//
// # Replies
//
// text, reasoning, the id of a tool call and every string inside
// arguments are Go text/templates. They see:
//
//	.LastUser     text of the last user message
//	.Last         content of the last message, whatever its role
//	.ToolResults  []string: the tool results after the last assistant message, in order
//	.System       the system prompt
//	.Model        the model name
//	.Tools        []string: names of the offered tools
//	.Turn         1 + the number of assistant messages
//
// and the functions join (strings.Join), json (the value as JSON: for a
// string, a quoted and escaped string literal), trim, lower and upper. For
// example:
//
//	text: "Found: {{ join .ToolResults \"; \" }}"
//
// arguments is either a mapping, whose string leaves are templates and
// which is sent as a JSON object, or a string, which is a template for the
// raw JSON text:
//
//	arguments: '{"query": {{ json .LastUser }}}'
//
// Raw arguments are passed on as rendered, even when they are not valid
// JSON, so a script can feed a client broken tool input. Where a wire
// format carries arguments as a JSON object rather than a string (Anthropic
// without streaming, Gemini), arguments that are not a JSON object are sent
// as {}. A tool call without arguments has {}.
//
// A tool call without an id gets a generated one, "call_1", "call_2", ...
// numbered per script ("toolu_1", ... on the Anthropic endpoint).
//
// usage sets the token counts; a count left out is estimated as a quarter
// of the bytes of the request (system prompt and messages) or of the reply,
// at least 1. cache_read_tokens and cache_write_tokens (0 when left out)
// are the part of input_tokens read from or written to a prompt cache; the
// server reports them as each provider does (OpenAI's
// prompt_tokens_details, Anthropic's cache_read_input_tokens and
// cache_creation_input_tokens beside the uncached input_tokens, Gemini's
// cachedContentTokenCount; Gemini has no cache writes). reasoning_tokens
// (0 when left out, estimated from reasoning when usage is left out) are
// the part of output_tokens spent thinking. finish is stop, tool_calls,
// length, content_filter or other;
// without it a reply with tool calls finishes with tool_calls and any other
// with stop.
//
// A template that fails when it runs (a missing field, a function error) is
// an error answer naming the rule: HTTP 500 from the server, an *llm.Error
// of KindServer from the Provider. A request that no rule answers gets HTTP
// 400, or an *llm.Error of KindBadRequest, with the message
//
//	llmtest: no rule matched (model "m", last message "...")
//
// reasoning is the readable summary of the model's thinking. Each wire
// reports it as its provider gives summaries, never as answer text (on
// chat completions, as reasoning_content for a model of no OpenAI family,
// as vLLM and DeepSeek do; OpenAI's own give none there); the
// Provider sets llm.Message.Reasoning and streams it as one
// llm.EventReasoningDelta before the text.
//
// # Strict mode
//
// A provider may refuse a conversation that lost what it requires back,
// such as a reasoning model's history without its reasoning. With
// "strict: true" at the top of the script the server refuses such a
// request as its provider does (a 400 in the provider's error shape,
// before any rule is consulted); without it the fake is lenient, so a test
// may build a history by hand. Each wire names the rules only strict mode
// enforces. Rules every request must follow (a tool result naming no call,
// a tampered reasoning item) are enforced either way.
//
// # The Anthropic endpoint
//
// The messages endpoint emulates what Anthropic documents for its current
// models (platform.claude.com, read 2026-11-28; each rule is sourced in
// anthropic_models.go), by model family: claude-sonnet-5-5, claude-opus-5-5,
// claude-fable-5-1 and -5-2, claude-sonnet-5 and claude-opus-5, with or
// without a snapshot date. Any other model name answers as before.
//
//   - They think by default: an answer opens with a thinking block, signed;
//     its text, the rule's reasoning or a summary of the fake's, shows only
//     with thinking.display "summarized" (their default is "omitted"). On
//     the 5.5 models the text of a turn that calls tools comes in a thinking
//     block too. Any model thinks when a request asks it to (thinking type
//     adaptive or enabled) or when the rule gives a reasoning; a user
//     message holding Anthropic's documented test string
//     ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_... adds a
//     redacted_thinking block.
//   - Refused with the provider's 400 in strict mode: a non-default
//     temperature, top_p or top_k; a thinking budget; thinking disabled
//     where it cannot be (and on Opus 5 above effort high); between_tools
//     at effort xhigh or max; a forced tool_choice on the 5.5 models; an
//     assistant prefill on Sonnet 5.5; an effort that is not low, medium,
//     high, xhigh or max. What no model takes (an unknown thinking type or
//     display, a budget under 1,024 or not below max_tokens) is refused
//     either way.
//   - On every model, a thinking or redacted_thinking block sent back must
//     be one the fake signed, unchanged, after the same system prompt,
//     tools and messages on the models whose blocks are bound to their
//     conversation (Sonnet 5.5, Opus 5.5, Fable), else 400; a block of
//     another family the model cannot read is dropped without an error.
//     In strict mode, a turn that called tools must come back with every
//     thinking block it had, in order.
//   - The prompt cache: a request with cache_control breakpoints (at most
//     4, else 400) writes its prefix up to its last breakpoint, and a later
//     request of the same model that repeats it reads it back, found from
//     any breakpoint 20 blocks back at most, when it is at least the
//     model's smallest cacheable prompt (512 tokens on the 5.5 models and
//     Opus 5, 1,024 otherwise). Input is counted as a quarter of the bytes
//     of each block as the API reads it, the same with breakpoints or
//     without; usage reports the reads and writes (unless the rule sets
//     usage) and the thinking tokens.
//
// # Faults
//
// fault replaces the reply with a failure. The rule's latency is waited
// first either way, and a faulting rule uses up its times like any other,
// so "fault: rate_limit, times: 1" followed by a normal rule scripts a
// failure that a retry gets past.
//
//	fault         Provider (in process)              server (HTTP)
//	rate_limit    KindRateLimited, RetryAfter set    429 and Retry-After (OpenAI: also retry-after-ms; Gemini: also a RetryInfo detail)
//	server_error  KindServer                         500
//	overloaded    KindServer                         529 (Anthropic), 503 (OpenAI, Gemini)
//	auth          KindAuth                           401
//	bad_request   KindBadRequest                     400
//	malformed     KindBadRequest                     200 with a body that is not JSON; streaming: a good first event, then a data line of broken JSON
//	stall         waits for ctx: KindCanceled or     blocks before any header; streaming: after the first event. Until the
//	              KindTimeout                        client goes away or the server closes, never longer
//	drop          KindConnection                     closes the connection before any header; streaming: after the first event
//
// Error bodies have each provider's shape, and the message names the rule.
// The Provider acts out every fault before any stream event.
//
// # The Provider
//
// NewProvider (or LoadProvider, for a file) returns an llm.Provider named
// "script", so a model string "script/path/to/file.yaml" can be served in
// process. It waits the latency (cancellable), streams text in a few deltas
// and then each tool call when asked to stream, with chunk_delay between
// events, and records every request. Sequence is a simpler provider for
// unit tests that answers fixed responses in order.
//
// # The server
//
// NewServer and StartServer start a Server on 127.0.0.1 that answers
//
//	POST /v1/chat/completions                           OpenAI (and Ollama's OpenAI-compatible API)
//	POST /v1/responses                                  OpenAI's Responses API
//	POST /v1/messages                                   Anthropic
//	POST /v1beta/models/{model}:generateContent         Gemini
//	POST /v1beta/models/{model}:streamGenerateContent   Gemini, with ?alt=sse
//	GET  /_requests                                     the request log as JSON
//
// For models of OpenAI's families (gpt-4.1, gpt-4o, gpt-5.x, the
// o-series) both OpenAI endpoints apply OpenAI's documented rules, dated
// and sourced in openai_models.go: the reasoning efforts each takes, the
// default temperature only on reasoning models, max_tokens refused on
// them, and function tools refused on chat completions for gpt-5.4 and
// later while they reason. Their prompts are cached as OpenAI caches them
// (a repeated prefix of 1024 tokens or more reports cached tokens, in
// steps of 128). On /v1/responses a reasoning model answers with a
// reasoning item (encrypted content, and its summary when asked for)
// before its output; the next request must send it back verifiably
// unchanged and followed by the item it preceded, every function call
// with its output. Strict mode also refuses an item the fake gave out
// after a reasoning item, sent back without it (a history built by hand
// passes). Other models (gpt-test, llama3.2) get
// none of these rules.
//
// Point the official SDKs at URL() (OpenAI: URL()+"/v1/"; Anthropic and
// Gemini: URL()). Server.Requests returns the log: for every request, when
// it arrived and was done, the protocol, headers, body, the request
// translated back to an llm.Request, the rule that answered and the status.
// The JSON log at /_requests redacts credential headers; the Go one does
// not, so tests can check that a key was sent. Serve runs a server until a
// context ends, for the fake-llm command.
package llmtest
