// Package providers turns a model string such as "openai/gpt-4.1",
// "ollama/llama3.2", "script/examples/team.yaml" or "<custom>/<model>" into
// a ready llm.Provider. It is the one place that knows every adapter, reads
// their environment variables (through Config.Getenv) and wraps them in the
// uniform retry policy.
//
// The scripted provider ("script/<path>") is wrapped in retry like every
// other: a script stands in for a real model, and everything above the model
// behaves as it would in production. A script that wants a fault to surface
// at once uses a kind that is not retried (auth, bad_request, malformed) or a
// configuration with retry max_attempts 1.
package providers
