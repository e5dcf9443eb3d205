package builtin

import (
	"net/url"
	"slices"
	"strings"
)

// hostLists are the allow-lists of hosts a network tool (fetch,
// web_search) was narrowed to, in the order they came: an agent's
// allowed_hosts, then the run's permissions.hosts. A host must be in every
// list, so that each narrowing only takes hosts away (tool.HostNarrower);
// joined into one list they would let an agent's allowed_hosts reach a
// host the run's grant leaves out.
type hostLists [][]string

// and is the lists with hosts as one more.
func (l hostLists) and(hosts []string) hostLists {
	return append(slices.Clip(l), slices.Clone(hosts))
}

// allows reports whether u's host is in every list (an entry or a
// subdomain of one); true when there is no list.
func (l hostLists) allows(u *url.URL) bool {
	return l.allowsHost(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")))
}

func (l hostLists) allowsHost(host string) bool {
	for _, list := range l {
		if !hostMatches(host, list) {
			return false
		}
	}
	return true
}

// entries are the entries, as they are spelled, whose hosts every list
// allows, each once, in order: the hosts the tool still reaches, as one
// list (for the model's description and a provider's allowed domains).
// Empty when the lists share no host.
func (l hostLists) entries() []string {
	var out []string
	for _, list := range l {
		for _, e := range list {
			if h := hostEntry(e); h != "" && !slices.Contains(out, e) && l.allowsHost(h) {
				out = append(out, e)
			}
		}
	}
	return out
}

// hostInList reports whether u's host is an entry of list or a subdomain of
// one.
func hostInList(u *url.URL, list []string) bool {
	return hostMatches(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), list)
}

// hostMatches reports whether host (lower case) is an entry of list or a
// subdomain of one.
func hostMatches(host string, list []string) bool {
	for _, entry := range list {
		entry = hostEntry(entry)
		if entry != "" && (host == entry || strings.HasSuffix(host, "."+entry)) {
			return true
		}
	}
	return false
}
