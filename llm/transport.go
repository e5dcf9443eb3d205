package llm

import (
	"net/http"
	"sync"
)

// IdleConnsPerHost is how many idle connections the provider transport
// keeps open to one server, for the next calls to reuse.
//
// http.DefaultTransport keeps 2. A tree's calls come in waves (a parent's
// children all call at once, then their parents go on), and over HTTP/1.1
// (a local server, a proxy, the fake provider) each call of a wave needs a
// connection of its own: with 2 kept, all but 2 of a wave of nine were
// dialled again for the next wave, and a TLS server's handshake made again.
// Over HTTP/2 the calls share one connection anyway.
const IdleConnsPerHost = 256

// Transport is the HTTP transport providers send through unless given a
// client of their own (providers.Config.HTTPClient, an adapter's
// HTTPClient): one for the whole process, so that every tree, provider
// and model calling the same server shares its connections.
// It is http.DefaultTransport's settings (proxy from the environment,
// HTTP/2, dial, handshake and idle timeouts) with room for
// IdleConnsPerHost idle connections a server, and no bound across
// servers beyond that.
var Transport = sync.OnceValue(func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no bound over all hosts; each has IdleConnsPerHost
	t.MaxIdleConnsPerHost = IdleConnsPerHost
	return t
})
