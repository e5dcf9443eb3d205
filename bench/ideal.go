package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
)

// The ideal client is this program run again with -ideal: a process that
// makes exactly the model calls of the tree against the same fake (each
// agent's calls in order, siblings concurrently) and does nothing else —
// no configuration, ledger, retries or events. Its wall time is the floor
// any agent runner on this machine could reach: process start plus the
// calls on the critical path, latencies included.

type idealSpec struct {
	URL    string                `json:"url"` // the fake's base, http://host:port
	Root   string                `json:"root"`
	Task   string                `json:"task"`
	Agents map[string]idealAgent `json:"agents"`
}

type idealAgent struct {
	System string `json:"system"`
	Sub    string `json:"sub,omitempty"` // the one agent it may call
}

func idealMain(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec idealSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	out, err := spec.run(spec.Root, spec.Task)
	if err != nil {
		return err
	}
	fmt.Println(out)
	return nil
}

type chatMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

var callAgentTool = json.RawMessage(`[{"type":"function","function":{"name":"call_agent","parameters":{"type":"object","properties":{"agent":{"type":"string"},"task":{"type":"string"}},"required":["agent","task"]}}}]`)

// run plays one agent: call the model, run the agents it asks for at once,
// hand back their answers, until it answers in text (at most 10 calls).
func (s *idealSpec) run(agent, task string) (string, error) {
	a, ok := s.Agents[agent]
	if !ok {
		return "", fmt.Errorf("unknown agent %q", agent)
	}
	msgs := []chatMessage{{Role: "system", Content: a.System}, {Role: "user", Content: task}}
	for range 10 {
		req := map[string]any{"model": "gpt-test", "messages": msgs}
		if a.Sub != "" {
			req["tools"] = callAgentTool
		}
		reply, err := s.call(req)
		if err != nil {
			return "", fmt.Errorf("%s: %w", agent, err)
		}
		if len(reply.ToolCalls) == 0 {
			return reply.Content, nil
		}
		msgs = append(msgs, reply)
		results := make([]chatMessage, len(reply.ToolCalls))
		errs := make([]error, len(reply.ToolCalls))
		var wg sync.WaitGroup
		for i, tc := range reply.ToolCalls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var args struct{ Agent, Task string }
				if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
					errs[i] = err
					return
				}
				out, err := s.run(args.Agent, args.Task)
				results[i], errs[i] = chatMessage{Role: "tool", Content: out, ToolCallID: tc.ID}, err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return "", err
			}
		}
		msgs = append(msgs, results...)
	}
	return "", fmt.Errorf("%s: no answer after 10 model calls", agent)
}

func (s *idealSpec) call(req map[string]any) (chatMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return chatMessage{}, err
	}
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return chatMessage{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return chatMessage{}, fmt.Errorf("status %s", resp.Status)
	}
	var out struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return chatMessage{}, err
	}
	if len(out.Choices) == 0 {
		return chatMessage{}, fmt.Errorf("no choices in the answer")
	}
	return out.Choices[0].Message, nil
}
