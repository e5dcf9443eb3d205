package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

const (
	// maxRedirects matches net/http's own default.
	maxRedirects = 10
	// errorBodyBytes is how much of a 4xx/5xx body is shown with the status.
	errorBodyBytes = 1000
)

type fetchArgs struct {
	URL string `json:"url" jsonschema:"http or https URL to GET"`
}

func fetchTool(e *env) tool.Tool {
	desc := "Fetch a URL with HTTP GET and return its body as text (HTML is reduced to readable text)."
	if len(e.opts.FetchAllowHosts) > 0 {
		desc += " Allowed hosts: " + strings.Join(e.opts.FetchAllowHosts, ", ") + "."
	}
	return tool.New(Fetch, desc, e.fetch)
}

// defaultFetchClient is used when Options.HTTPClient is nil.
var defaultFetchClient = &http.Client{Timeout: 60 * time.Second}

func (e *env) fetch(ctx context.Context, a fetchArgs) (tool.Result, error) {
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return tool.Errorf("%q is not an http or https URL", redactURLString(a.URL)), nil
	}
	shown := u.Redacted()
	if !e.hostAllowed(u) {
		return tool.Errorf("fetching from host %q is not allowed (allowed: %s)", u.Hostname(), strings.Join(e.opts.FetchAllowHosts, ", ")), nil
	}
	client := e.opts.HTTPClient
	if client == nil {
		client = defaultFetchClient
	}
	// A copy, so the allow-list also holds for redirects without changing
	// the caller's client.
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !e.hostAllowed(req.URL) {
			return fmt.Errorf("redirect to host %q is not allowed", req.URL.Hostname())
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tool.Errorf("fetch %s: %v", shown, err), nil
	}
	req.Header.Set("User-Agent", "deputy (tool fetch)")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/json, */*;q=0.5")
	resp, err := c.Do(req)
	if err != nil {
		// *url.Error repeats the URL, credentials included; keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return tool.Errorf("fetch %s: %v", shown, err), nil
	}
	defer resp.Body.Close()

	body, err := io.ReadAll(io.LimitReader(resp.Body, e.opts.FetchMaxBytes+1))
	if err != nil {
		return tool.Errorf("fetch %s: reading body: %v", shown, err), nil
	}
	truncated := int64(len(body)) > e.opts.FetchMaxBytes
	if truncated {
		body = body[:e.opts.FetchMaxBytes]
	}
	mediaType := mediaTypeOf(resp.Header.Get("Content-Type"), body)

	if resp.StatusCode >= 400 {
		msg := fmt.Sprintf("HTTP %s from %s", resp.Status, shown)
		if isTextual(mediaType) && len(body) > 0 {
			snippet := llm.CutUTF8(strings.TrimSpace(bodyText(mediaType, body)), errorBodyBytes)
			if snippet != "" {
				msg += "\n\n" + snippet
			}
		}
		return tool.Result{Content: msg, IsError: true}, nil
	}
	if !isTextual(mediaType) {
		return tool.Errorf("%s has content type %q, which fetch cannot show as text", shown, mediaType), nil
	}
	text := bodyText(mediaType, body)
	if truncated {
		text += fmt.Sprintf("\n[truncated: only the first %d bytes were fetched]", e.opts.FetchMaxBytes)
	}
	if strings.TrimSpace(text) == "" {
		text = "[empty response]"
	}
	return tool.Text(text), nil
}

// hostAllowed applies FetchAllowHosts: an entry allows its host and every
// subdomain of it; a leading "*." or "." in an entry means the same.
func (e *env) hostAllowed(u *url.URL) bool {
	if len(e.opts.FetchAllowHosts) == 0 {
		return true
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	for _, entry := range e.opts.FetchAllowHosts {
		entry = strings.ToLower(strings.TrimSpace(entry))
		if h, _, err := net.SplitHostPort(entry); err == nil {
			entry = h
		}
		entry = strings.TrimPrefix(strings.TrimPrefix(entry, "*"), ".")
		entry = strings.Trim(entry, "[]")
		if entry != "" && (host == entry || strings.HasSuffix(host, "."+entry)) {
			return true
		}
	}
	return false
}

// mediaTypeOf returns the body's media type, sniffing when the server did
// not say.
func mediaTypeOf(header string, body []byte) string {
	if header == "" {
		header = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.SplitN(header, ";", 2)[0]))
	}
	return mt
}

// isTextual reports media types a model can read as text.
func isTextual(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
		strings.Contains(mt, "javascript"), strings.Contains(mt, "ecmascript"):
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/x-yaml", "application/yaml",
		"application/toml", "application/x-sh", "application/sql", "application/graphql":
		return true
	}
	return false
}

// bodyText converts a textual body to what the model sees.
func bodyText(mt string, body []byte) string {
	if mt == "text/html" || mt == "application/xhtml+xml" {
		return htmlToText(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// redactURLString hides userinfo in a string that may not even parse.
func redactURLString(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	if i := strings.Index(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "xxxxx" + s[i:]
		}
	}
	return s
}
