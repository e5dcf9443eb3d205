package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// flagships are the models deputy doctor checks by default: each built-in
// provider's current flagship (read 2026-11-28: Anthropic's models
// overview and Claude Code's sonnet alias, OpenAI's and Google's model
// pages), and the variables that hold its key. A provider whose key is not
// set is not called.
var flagships = []struct {
	model string
	keys  []string
}{
	{"anthropic/claude-sonnet-5-5", []string{"ANTHROPIC_API_KEY"}},
	{"openai/gpt-5.6", []string{"OPENAI_API_KEY"}},
	{"gemini/gemini-3-pro", []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
}

type doctorFlags struct {
	timeout time.Duration
	json    bool
}

func newDoctorCmd(g *globalFlags) *cobra.Command {
	f := &doctorFlags{}
	cmd := &cobra.Command{
		Use:   "doctor [MODEL...]",
		Short: "Check each provider whose key is set with a two-step tool loop on its flagship model",
		Long: `Check that deputy speaks each provider's current protocol, with your keys.

For each built-in provider whose key is set (ANTHROPIC_API_KEY, OPENAI_API_KEY,
GEMINI_API_KEY or GOOGLE_API_KEY), deputy runs a two-step tool loop on its
current flagship model (anthropic/claude-sonnet-5-5, openai/gpt-5.6,
gemini/gemini-3-pro): the model calls a tool, gets its result with whatever
the provider requires back (thinking blocks, reasoning items, thought
signatures), and answers with it. Each provider passes or fails on one line;
a failure says what kind (authentication, bad request with the provider's
message, connection, rate limited, server error, timeout, or protocol: the
model skipped the tool or its result). A provider without a key is skipped
and not called. Name models to check those instead, any provider's, as
provider/model or a Claude Code alias such as sonnet; a name that is neither
exits 2 before any call.

The calls are real and billed (a few hundred tokens each). Keys are never
printed. Exit status: 0 when every check passed, 3 when one failed, 1 when
nothing could be checked.`,
		Example: `  deputy doctor
  deputy doctor --json
  deputy doctor ollama/llama3.2 sonnet`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd, g, f, args)
		},
	}
	cmd.Flags().DurationVar(&f.timeout, "timeout", 2*time.Minute, "time each check may take")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the results as JSON")
	return cmd
}

// doctorResult is one check, as printed.
type doctorResult struct {
	Model  string `json:"model"`
	Status string `json:"status"` // pass, fail or skip
	// Class says what kind of failure: authentication, bad request,
	// connection, rate limited, server error, timeout, or protocol (the
	// model did not do the loop).
	Class      string    `json:"class,omitempty"`
	Detail     string    `json:"detail,omitempty"`
	Turns      int       `json:"turns,omitempty"`
	DurationMS int64     `json:"duration_ms,omitempty"`
	Usage      llm.Usage `json:"usage"`
	// Thinking says the model gave a summary of its thinking; State names
	// the format of the opaque state it gave, which went back with the
	// next request.
	Thinking bool   `json:"thinking,omitempty"`
	State    string `json:"state,omitempty"`
}

func runDoctor(cmd *cobra.Command, g *globalFlags, f *doctorFlags, models []string) error {
	w, err := loadWorkspace(cmd, g)
	if err != nil {
		return err
	}
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	results := make([]doctorResult, 0, len(flagships))
	var checks []int // indexes of results to run
	if len(models) == 0 {
		for _, fl := range flagships {
			if keySet(fl.keys) {
				checks = append(checks, len(results))
				results = append(results, doctorResult{Model: fl.model})
				continue
			}
			results = append(results, doctorResult{Model: fl.model, Status: "skip", Detail: strings.Join(fl.keys, " or ") + " is not set"})
		}
	} else {
		for _, m := range models {
			// As --model takes it: a Claude Code alias resolves, and a
			// name that is not provider/model is a usage error.
			model, err := modelName(m)
			if err != nil {
				return configErr(err)
			}
			checks = append(checks, len(results))
			results = append(results, doctorResult{Model: model})
		}
	}
	secrets := w.Models.Secrets()
	var wg sync.WaitGroup
	for _, i := range checks {
		wg.Go(func() {
			results[i] = checkModel(ctx, w.Models, results[i].Model, f.timeout)
			results[i].Detail = secrets.Redact(results[i].Detail)
		})
	}
	wg.Wait()
	if f.json {
		if err := writeJSON(cmd.OutOrStdout(), results); err != nil {
			return err
		}
	} else {
		printDoctor(cmd.OutOrStdout(), results)
	}
	return doctorExit(results)
}

// keySet reports whether one of the variables is set.
func keySet(keys []string) bool {
	for _, k := range keys {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// doctorExit is the command's error: a failure is a provider error (3),
// and nothing checked is a failure (1).
func doctorExit(results []doctorResult) error {
	checked := 0
	for _, r := range results {
		switch r.Status {
		case "fail":
			return &exitError{code: ExitProvider, err: errors.New("a provider check failed"), quiet: true}
		case "pass":
			checked++
		}
	}
	if checked == 0 {
		return &exitError{code: ExitFailed, err: errors.New("nothing was checked: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, or name a model")}
	}
	return nil
}

// lookupArgs are the doctor's tool's arguments.
type lookupArgs struct {
	Key string `json:"key" jsonschema:"the key to look up"`
}

// checkModel runs the two-step tool loop on model: the model must call
// the lookup tool, then answer with the word it returned.
func checkModel(ctx context.Context, models modelSource, model string, timeout time.Duration) doctorResult {
	res := doctorResult{Model: model}
	prov, ref, err := models.ForModel(model)
	if err != nil {
		return checkFailed(res, err)
	}
	word := doctorWord()
	var called atomic.Int32
	lookup := tool.New("lookup", "Look a key up and return its value.", func(ctx context.Context, a lookupArgs) (tool.Result, error) {
		called.Add(1)
		return tool.Text(word), nil
	})
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	out, err := agent.Run(ctx, agent.Spec{Name: "doctor", Provider: prov, Model: ref.Model,
		System:   "You check that a tool loop works. Use the tool you are given, then answer in one word.",
		Messages: []llm.Message{llm.UserMessage(`Call the lookup tool with the key "doctor", then reply with exactly the value it returns and nothing else.`)},
		Tools:    tool.NewRegistry(lookup), MaxTurns: 4, ToolConcurrency: 1,
		// Streamed, as deputy's runs are when someone watches.
		Stream: true, OnEvent: func(agent.Event) {}})
	res.DurationMS = time.Since(start).Milliseconds()
	if out != nil {
		res.Turns, res.Usage = out.Turns, out.Usage
		for _, m := range out.Messages {
			res.Thinking = res.Thinking || m.Reasoning != ""
			if m.State != nil {
				res.State = m.State.Format
			}
		}
	}
	switch {
	case err != nil:
		return checkFailed(res, err)
	case out.Err != nil:
		return checkFailed(res, out.Err)
	case called.Load() == 0:
		res.Status, res.Class, res.Detail = "fail", "protocol", fmt.Sprintf("the model answered without calling the tool: %q", llm.ClipMessage(out.Output, 120))
	case !strings.Contains(out.Output, word):
		res.Status, res.Class, res.Detail = "fail", "protocol", fmt.Sprintf("the answer after the tool result does not hold it: %q", llm.ClipMessage(out.Output, 120))
	default:
		res.Status = "pass"
	}
	return res
}

// modelSource gives a model string's provider (providers.Registry).
type modelSource interface {
	ForModel(model string) (llm.Provider, llm.ModelRef, error)
}

// checkFailed is res failed by err, with err's class.
func checkFailed(res doctorResult, err error) doctorResult {
	res.Status, res.Class, res.Detail = "fail", "error", err.Error()
	var le *llm.Error
	if errors.As(err, &le) {
		res.Class = le.Kind.String()
	}
	return res
}

// doctorWord is the value the tool returns: random, so that only a model
// that read the tool's result can answer with it.
func doctorWord() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "marigold-" + hex.EncodeToString(b[:])
}

// printDoctor prints one line per check.
func printDoctor(out io.Writer, results []doctorResult) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, r := range results {
		var what string
		switch r.Status {
		case "pass":
			what = fmt.Sprintf("%d turns, %s, %d tokens", r.Turns, time.Duration(r.DurationMS)*time.Millisecond, r.Usage.Total())
			if r.Thinking {
				what += ", thought aloud"
			}
			if r.State != "" {
				what += ", its state sent back (" + r.State + ")"
			}
		case "fail":
			what = r.Class + ": " + r.Detail
		default:
			what = r.Detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Model, r.Status, what)
	}
	tw.Flush()
}
