// Package openai is deputy's adapter for OpenAI: its Responses API for
// OpenAI's own models, and the chat completions API for every server that
// speaks it: Ollama's /v1 endpoint, vLLM, llama.cpp, LM Studio, OpenRouter
// and the like. It is built on the official SDK
// (github.com/openai/openai-go/v3, its responses package for the former)
// and implements llm.Provider.
//
// Decisions worth knowing:
//
//   - Which API: Options.WireAPI, or by default the Responses API for a
//     model of OpenAI's families at OpenAI's own host and chat completions
//     for everything else, which compatible servers all speak.
//   - The Responses API is used statelessly (store false, encrypted
//     reasoning included): a reasoning model's reasoning items travel in
//     llm.Message.State and go back with the next request as they came,
//     so a tool loop keeps its reasoning. Reasoning summaries are
//     llm.Message.Reasoning, never answer text, and never sent back.
//   - A spec with Server is the Responses API's web_search tool on OpenAI's
//     models that have it (ServerTools; chat completions have none): its
//     web_search_call items are kept in State, in their place, and go back
//     with the turn, never a tool call; the searches are
//     llm.Usage.WebSearches (responses_search.go).
//   - The SDK never reads the environment here. The client is assembled from
//     explicit options only; the one place that reads OPENAI_API_KEY,
//     OPENAI_BASE_URL and OLLAMA_HOST is FromEnv / OllamaFromEnv.
//   - The SDK's own retries are off. Retrying is done uniformly for all
//     providers by llm.WithRetry above the adapter.
//   - Max tokens travel as max_completion_tokens to OpenAI itself (its
//     reasoning models refuse max_tokens) and as max_tokens to every other
//     server, which is the field all compatible servers understand. Options
//     can force either.
//   - The chat completions wire format has no error flag on tool results, so
//     llm.Message.IsError is not sent; the result text must speak for itself.
//   - Errors are all *llm.Error. A 2xx response whose body cannot be decoded
//     is KindBadRequest ("malformed response"), which llm.WithRetry does not
//     retry: a server that answers garbage once will most likely do so again.
//     A stream that ends cleanly but before any finish_reason arrived counts
//     as a dropped connection (KindConnection), since the answer is partial.
//   - Finish reasons are normalised: a response carrying tool calls is
//     FinishToolCalls even when a compatible server reports "stop".
package openai
