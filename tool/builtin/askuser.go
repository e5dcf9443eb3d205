package builtin

import (
	"context"
	"strings"

	"github.com/deputyhq/deputy/tool"
)

type askUserArgs struct {
	Question string `json:"question" jsonschema:"the question to put to the user; make it answerable in a line or two"`
}

func askUserTool(e *env) tool.Tool {
	return tool.New(AskUser,
		"Ask the user a question and wait for the answer. Use it only when the task cannot go on without a decision or fact only the user has.",
		e.askUser)
}

func (e *env) askUser(ctx context.Context, a askUserArgs) (tool.Result, error) {
	if e.opts.AskUser == nil {
		return tool.Errorf("ask_user is not available: no interactive terminal"), nil
	}
	if strings.TrimSpace(a.Question) == "" {
		return tool.Errorf("question must not be empty"), nil
	}
	answer, err := e.opts.AskUser(ctx, a.Question)
	if err != nil {
		return tool.Errorf("ask_user failed: %v", err), nil
	}
	if strings.TrimSpace(answer) == "" {
		return tool.Text("(the user gave an empty answer)"), nil
	}
	return tool.Text(answer), nil
}
