package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/deputyhq/deputy/llm"
)

// TemplateData is what reply templates see.
type TemplateData struct {
	// LastUser is the text of the last user message.
	LastUser string
	// Last is the content of the last message, whatever its role.
	Last string
	// ToolResults are the contents of the tool messages after the last
	// assistant message, in order.
	ToolResults []string
	System      string
	Model       string
	// Tools are the names of the tools the request offers.
	Tools []string
	// Turn is 1 + the number of assistant messages in the request.
	Turn int
}

var templateFuncs = template.FuncMap{
	"join": strings.Join,
	// json renders a value as JSON; for a string that is a quoted string
	// literal, safe to put inside raw JSON arguments.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"trim":  strings.TrimSpace,
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
}

// parseTemplate compiles one template; what names the place for errors.
// A string without "{{" needs no template and returns nil.
func parseTemplate(what, text string) (*template.Template, error) {
	if !strings.Contains(text, "{{") {
		return nil, nil
	}
	t, err := template.New(what).Funcs(templateFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: bad template: %w", what, err)
	}
	return t, nil
}

// render executes t, or returns text as it is when t is nil.
func render(t *template.Template, text string, data *TemplateData) (string, error) {
	if t == nil {
		return text, nil
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// newTemplateData extracts the template data from a request.
func newTemplateData(req *llm.Request) *TemplateData {
	d := &TemplateData{System: req.System, Model: req.Model, Turn: 1}
	lastAssistant := -1
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			d.LastUser = m.Content
		case llm.RoleAssistant:
			d.Turn++
			lastAssistant = i
		}
	}
	if n := len(req.Messages); n > 0 {
		d.Last = req.Messages[n-1].Content
	}
	for _, m := range req.Messages[lastAssistant+1:] {
		if m.Role == llm.RoleTool {
			d.ToolResults = append(d.ToolResults, m.Content)
		}
	}
	for _, t := range req.Tools {
		d.Tools = append(d.Tools, t.Name)
	}
	return d
}

// argsTemplate is compiled tool call arguments: either a raw JSON template
// or a tree of values whose string leaves may be templates.
type argsTemplate struct {
	raw     *template.Template
	rawText string
	tree    any // map[string]any / []any / scalars, with *leafTemplate leaves
}

type leafTemplate struct {
	t    *template.Template
	text string
}

// compileArgs checks and compiles the arguments of one scripted tool call.
func compileArgs(what string, v any) (*argsTemplate, error) {
	switch v := v.(type) {
	case nil:
		return &argsTemplate{rawText: "{}"}, nil
	case string:
		t, err := parseTemplate(what, v)
		if err != nil {
			return nil, err
		}
		return &argsTemplate{raw: t, rawText: v}, nil
	case map[string]any, map[any]any:
		tree, err := compileTree(what, v)
		if err != nil {
			return nil, err
		}
		return &argsTemplate{tree: tree}, nil
	}
	return nil, fmt.Errorf("%s: must be a mapping or a string of raw JSON, not %T", what, v)
}

func compileTree(what string, v any) (any, error) {
	switch v := v.(type) {
	case string:
		t, err := parseTemplate(what, v)
		if err != nil || t == nil {
			return v, err
		}
		return &leafTemplate{t: t, text: v}, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := compileTree(what+"."+k, e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		// YAML allows non-string keys; JSON does not, so they become strings.
		out := make(map[string]any, len(v))
		for k, e := range v {
			ks := fmt.Sprint(k)
			c, err := compileTree(what+"."+ks, e)
			if err != nil {
				return nil, err
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := compileTree(fmt.Sprintf("%s[%d]", what, i), e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	return v, nil
}

// render produces the JSON arguments. Raw arguments are passed on as
// rendered, valid JSON or not, so a script can feed a client broken input.
func (a *argsTemplate) render(data *TemplateData) (json.RawMessage, error) {
	if a.tree == nil {
		s, err := render(a.raw, a.rawText, data)
		return json.RawMessage(s), err
	}
	v, err := renderTree(a.tree, data)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return b, nil
}

func renderTree(v any, data *TemplateData) (any, error) {
	switch v := v.(type) {
	case *leafTemplate:
		return render(v.t, v.text, data)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			r, err := renderTree(e, data)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			r, err := renderTree(e, data)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}
