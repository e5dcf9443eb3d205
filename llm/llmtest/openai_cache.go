package llmtest

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/deputyhq/deputy/llm"
)

// OpenAI caches prompts on its own: "Cache hits require an exact, repeated
// prefix match and works automatically for prompts containing 1024 tokens
// or more, with cache hits occurring in increments of 128 tokens"
// (openai-cookbook, Prompt_Caching_201, and developers.openai.com/api/docs/
// guides/prompt-caching, read 2026-11-28). gpt-5.6 places one implicit
// breakpoint of its own choosing; the fake reads every earlier prompt as a
// cache, which is what that breakpoint gives a tool loop. The usage
// reports the hit as cached_tokens, part of the input tokens.
const (
	oaCacheMinTokens = 1024
	oaCacheStep      = 128
	// oaCacheMaxBytes bounds what the fake remembers: a fake left serving
	// forgets its oldest prompts.
	oaCacheMaxBytes = 8 << 20
)

// promptCache remembers the prompts an OpenAI endpoint of the fake has
// seen, to report the cache hits of a repeated prefix.
type promptCache struct {
	mu      sync.Mutex
	prompts []cachedPrompt
	bytes   int
}

// cachedPrompt is one prompt: what must match exactly for any hit (the
// model and the tools) and the text whose prefix is matched (the system
// prompt and the messages, as the fake counts them for its token
// estimate).
type cachedPrompt struct {
	head, text string
}

// promptOf is req's prompt as the cache sees it.
func promptOf(req *llm.Request) cachedPrompt {
	tools, _ := json.Marshal(req.Tools)
	var b strings.Builder
	b.WriteString(req.System)
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		for _, tc := range m.ToolCalls {
			b.WriteString(tc.Name)
			b.Write(tc.Arguments)
		}
	}
	return cachedPrompt{head: req.Model + "\x00" + string(tools), text: b.String()}
}

// hit returns the tokens of req's prompt an earlier prompt had cached
// (about four bytes a token, as the fake estimates usage), and remembers
// req's prompt for the next requests. Models of no OpenAI family, such as
// a compatible server's, never hit.
func (c *promptCache) hit(req *llm.Request) int64 {
	if c == nil {
		return 0
	}
	if _, ok := oaModelOf(req.Model); !ok {
		return 0
	}
	p := promptOf(req)
	if len(p.text)/4 < oaCacheMinTokens {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	best := 0
	for _, old := range c.prompts {
		if old.head == p.head {
			best = max(best, commonPrefix(old.text, p.text))
		}
	}
	c.prompts = append(c.prompts, p)
	c.bytes += len(p.head) + len(p.text)
	for c.bytes > oaCacheMaxBytes && len(c.prompts) > 1 {
		c.bytes -= len(c.prompts[0].head) + len(c.prompts[0].text)
		c.prompts = c.prompts[1:]
	}
	tokens := best / 4
	if tokens < oaCacheMinTokens {
		return 0
	}
	return int64(tokens - tokens%oaCacheStep)
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// withCacheHit returns u with cached tokens reported: the hit, or what the
// script said when that is more, never more than the input.
func withCacheHit(u llm.Usage, hit int64) llm.Usage {
	u.CacheReadTokens = min(max(u.CacheReadTokens, hit), u.InputTokens-u.CacheWriteTokens)
	return u
}
