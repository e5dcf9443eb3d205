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
	"syscall"
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

// fetchTool is the fetch tool of one env. HostNarrower lets the engine
// give an agent a copy that reaches fewer hosts (axe's allowed_hosts).
type fetchTool struct {
	tool.Tool
	e *env
	// hosts are the allow-lists the tool was narrowed to (an agent's
	// allowed_hosts, the run's grant); a host must pass each and the env's.
	hosts hostLists
}

func newFetchTool(e *env, hosts hostLists) *fetchTool {
	f := &fetchTool{e: e, hosts: hosts}
	desc := "Fetch a URL with HTTP GET and return its body as text (HTML is reduced to readable text)."
	if hosts := f.allowList(); len(hosts) > 0 {
		desc += " Allowed hosts: " + strings.Join(hosts, ", ") + "."
	}
	f.Tool = tool.New(Fetch, desc, f.fetch)
	return f
}

// Name is the embedded tool's, without inferring its schema (tool.Name).
func (f *fetchTool) Name() string { return tool.Name(f.Tool) }

// NarrowHosts implements tool.HostNarrower: a fetch tool that also
// requires each host to be in hosts (or a subdomain of one).
func (f *fetchTool) NarrowHosts(hosts []string) tool.Tool {
	if len(hosts) == 0 {
		return f
	}
	return newFetchTool(f.e, f.hosts.and(hosts))
}

// allowList is the list the model is told about: the hosts the lists it
// was narrowed to share when it was narrowed, else the env's.
func (f *fetchTool) allowList() []string {
	if len(f.hosts) > 0 {
		return f.hosts.entries()
	}
	return f.e.opts.FetchAllowHosts
}

// allowed applies the env's list and each the tool was narrowed to.
func (f *fetchTool) allowed(u *url.URL) bool {
	return f.e.hostAllowed(u) && f.hosts.allows(u)
}

// explicitlyAllowed reports a host the user named in an allow-list: only
// such a host may resolve to a loopback, private or link-local address.
func (f *fetchTool) explicitlyAllowed(host string) bool {
	host = strings.ToLower(strings.Trim(strings.TrimSuffix(host, "."), "[]"))
	for _, list := range append(hostLists{f.e.opts.FetchAllowHosts}, f.hosts...) {
		for _, entry := range list {
			entry = strings.ToLower(strings.TrimSpace(entry))
			if h, _, err := net.SplitHostPort(entry); err == nil {
				entry = h
			}
			if strings.Trim(entry, "[]") == host {
				return true
			}
		}
	}
	return false
}

// numericHost reports a host made of dot-separated numbers — decimal,
// octal (leading 0) or hex (0x...) — that is not a canonical IP address.
func numericHost(h string) bool {
	if net.ParseIP(h) != nil {
		return false
	}
	for _, part := range strings.Split(strings.ToLower(h), ".") {
		digits := "0123456789"
		if hex, ok := strings.CutPrefix(part, "0x"); ok {
			part, digits = hex, "0123456789abcdef"
		}
		if part == "" && digits == "0123456789" || strings.Trim(part, digits) != "" {
			return false
		}
	}
	return true
}

// defaultFetchClient is used when Options.HTTPClient is nil. It uses no
// proxy: the address check below must see the address actually dialled.
var defaultFetchClient = &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
	ForceAttemptHTTP2:   true,
	TLSHandshakeTimeout: 10 * time.Second,
	MaxIdleConns:        10,
	IdleConnTimeout:     90 * time.Second,
}}

// ErrForbiddenAddress refuses a connection to an address fetch must not
// reach unless the user allowed its host by name.
var ErrForbiddenAddress = errors.New("is a loopback, private, link-local or metadata address; fetch reaches it only when the host is listed in fetch.allow_hosts (or the agent's allowed_hosts)")

// forbiddenIP reports addresses that belong to this machine or its private
// networks: loopback, RFC 1918 and unique-local, link-local (cloud
// metadata services such as 169.254.169.254 live there), CGNAT shared
// space, unspecified and multicast. IPv4-mapped IPv6 counts as its IPv4.
func forbiddenIP(ip net.IP) bool {
	if ip4 := ip.To4(); ip4 != nil {
		ip = ip4
		if ip4[0] == 100 && ip4[1]&0xc0 == 64 { // 100.64.0.0/10
			return true
		}
		if ip4[0] == 0 { // "this network"
			return true
		}
	}
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified()
}

// guardedClient returns a copy of c whose connections are checked after
// DNS resolution, on every redirect and for every spelling of an address
// (0x7f000001, 2130706433, [::1], ::ffff:127.0.0.1 all arrive here as the
// address dialled): a forbidden address is refused unless the host being
// dialled was allowed by name.
func (f *fetchTool) guardedClient(c *http.Client) *http.Client {
	base, ok := c.Transport.(*http.Transport)
	if c.Transport == nil {
		base, ok = defaultFetchClient.Transport.(*http.Transport), true
	}
	cp := *c
	if !ok {
		// A caller's own RoundTripper: it dials as it likes; the host
		// checks still apply, the address check cannot.
		return &cp
	}
	t := base.Clone()
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		d := *dialer
		if !f.explicitlyAllowed(host) {
			d.Control = func(_, address string, _ syscall.RawConn) error {
				h, _, err := net.SplitHostPort(address)
				if err != nil {
					return err
				}
				if ip := net.ParseIP(h); ip == nil || forbiddenIP(ip) {
					return fmt.Errorf("%s %w", h, ErrForbiddenAddress)
				}
				return nil
			}
		}
		return d.DialContext(ctx, network, addr)
	}
	cp.Transport = t
	return &cp
}

func (f *fetchTool) fetch(ctx context.Context, a fetchArgs) (tool.Result, error) {
	e := f.e
	u, err := url.Parse(strings.TrimSpace(a.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return tool.Errorf("%q is not an http or https URL", llm.RedactURL(a.URL)), nil
	}
	shown := u.Redacted()
	if numericHost(u.Hostname()) {
		// 0x7f000001, 2130706433, 127.1: the C resolver reads these as
		// addresses, and what they hide is easier refused than decoded.
		return tool.Errorf("host %q is an address in a non-standard spelling; write an IPv4 address as four decimal numbers (a.b.c.d)", u.Hostname()), nil
	}
	if !f.allowed(u) {
		allowed := strings.Join(f.allowList(), ", ")
		if allowed == "" {
			allowed = "no host"
		}
		return tool.Errorf("fetching from host %q is not allowed (allowed: %s)", u.Hostname(), allowed), nil
	}
	client := e.opts.HTTPClient
	if client == nil {
		client = defaultFetchClient
	}
	// A copy, so the allow-list also holds for redirects without changing
	// the caller's client.
	c := *f.guardedClient(client)
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if !f.allowed(req.URL) {
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
	return hostInList(u, e.opts.FetchAllowHosts)
}

// hostEntry is the host an entry of a host list names, lower case,
// without a port, brackets or a leading "*." or ".": the entry stands
// for it and its subdomains.
func hostEntry(entry string) string {
	entry = strings.ToLower(strings.TrimSpace(entry))
	if h, _, err := net.SplitHostPort(entry); err == nil {
		entry = h
	}
	entry = strings.TrimPrefix(strings.TrimPrefix(entry, "*"), ".")
	return strings.Trim(entry, "[]")
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
