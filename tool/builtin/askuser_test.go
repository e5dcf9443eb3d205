package builtin

import (
	"context"
	"errors"
	"testing"
)

func TestAskUserWithoutTerminal(t *testing.T) {
	r, _ := testRegistry(t, Options{}, nil)
	res := call(t, r, AskUser, map[string]any{"question": "Proceed?"})
	if !res.IsError || res.Content != "ask_user is not available: no interactive terminal" {
		t.Errorf("ask_user without a terminal = %+v", res)
	}
}

func TestAskUser(t *testing.T) {
	var asked string
	answers := map[string]struct {
		answer string
		err    error
	}{
		"Proceed?": {answer: "yes"},
		"Silent?":  {answer: "  "},
		"Broken?":  {err: errors.New("stdin closed")},
	}
	r, _ := testRegistry(t, Options{AskUser: func(ctx context.Context, q string) (string, error) {
		asked = q
		a := answers[q]
		return a.answer, a.err
	}}, nil)

	res := call(t, r, AskUser, map[string]any{"question": "Proceed?"})
	if res.IsError || res.Content != "yes" || asked != "Proceed?" {
		t.Errorf("ask_user = %+v (asked %q)", res, asked)
	}
	wantOK(t, call(t, r, AskUser, map[string]any{"question": "Silent?"}), "(the user gave an empty answer)")
	wantErr(t, call(t, r, AskUser, map[string]any{"question": "Broken?"}), "ask_user failed: stdin closed")
	asked = ""
	wantErr(t, call(t, r, AskUser, map[string]any{"question": " "}), "question must not be empty")
	if asked != "" {
		t.Error("an empty question reached the user")
	}
}

func TestAskUserPassesContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, _ := testRegistry(t, Options{AskUser: func(ctx context.Context, q string) (string, error) {
		return "", ctx.Err()
	}}, nil)
	wantErr(t, callCtx(ctx, t, r, AskUser, map[string]any{"question": "q"}), "context canceled")
}
