package anthropic

import (
	sdk "github.com/anthropics/anthropic-sdk-go"
)

// Prompt caching. A request carries at most four cache breakpoints
// (cache_control), and the adapter spends them as Claude Code does: on
// the stable prefix, the last tool definition and the system prompt,
// which stay the same for the whole conversation, and on the moving end
// of the conversation, the last block of the last two user turns. A
// breakpoint caches everything before it; the next turn of a tool loop
// sends the same prefix plus the assistant's turn and its tool results,
// so the breakpoint that was last marks the place where this turn reads
// the previous one from the cache, and the new last one writes the
// prefix for the next turn. Marking the previous place too, instead of
// relying on the API's 20-block lookback, keeps a turn with many tool
// calls reading the cache. The API leaves cache_control out of what it
// caches, so moving a breakpoint does not change the prefix.
// (platform.claude.com, build-with-claude/prompt-caching, read
// 2026-11-28.)

// breakpoint is an ephemeral (5-minute) cache breakpoint.
func breakpoint() sdk.CacheControlEphemeralParam {
	return sdk.NewCacheControlEphemeralParam()
}

// movingBreakpoints is how many user turns at the end of the conversation
// are marked.
const movingBreakpoints = 2

// markMovingBreakpoints marks the last block of each of the last
// movingBreakpoints user turns of msgs (users are their indexes).
func markMovingBreakpoints(msgs []sdk.MessageParam, users []int) {
	for _, i := range users[max(0, len(users)-movingBreakpoints):] {
		blocks := msgs[i].Content
		if len(blocks) == 0 {
			continue
		}
		switch b := blocks[len(blocks)-1]; {
		case b.OfText != nil:
			b.OfText.CacheControl = breakpoint()
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = breakpoint()
		}
	}
}
