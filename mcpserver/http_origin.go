package mcpserver

import (
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// The DNS-rebinding defence (SPEC §9). A web page the user opens can make
// their browser send requests to cordon's port; if its own domain resolves
// to 127.0.0.1, the browser thinks it talks to that domain. Such a request
// names the page's domain in Host and the page's origin in Origin, and
// cordon refuses both, before anything else: it answers only to its own
// names, and only to web pages from its own origins (plus those the user
// configured in [http] allowed_origins).

// ownOrigins are the origins of the address cordon serves on: for a
// loopback bind, each loopback name with the port (a browser calls the same
// server http://localhost:PORT, http://127.0.0.1:PORT or http://[::1]:PORT);
// otherwise http://ADDR as bound.
func ownOrigins(bound net.Addr, loopback bool) []string {
	_, port, err := net.SplitHostPort(bound.String())
	if !loopback || err != nil {
		return []string{"http://" + bound.String()}
	}
	return []string{"http://127.0.0.1:" + port, "http://localhost:" + port, "http://[::1]:" + port}
}

// isLoopbackName reports whether a Host header (host or host:port) names
// this machine's loopback interface: localhost, 127.0.0.0/8 or ::1.
func isLoopbackName(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// sameOrigin compares two origins as a browser serializes them: scheme and
// host are case-insensitive, and a configured origin may end in "/".
func sameOrigin(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/"))
}

// refuseRebinding answers 403 to a request that names cordon by a name that
// is not loopback when cordon serves on loopback (mcp-go does the same
// check, with a message that does not say what to do), and to one that
// carries an Origin that is neither cordon's own nor configured. A request
// without Origin (every client that is not a browser) passes: it was not
// sent by a web page.
func refuseRebinding(loopback bool, allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopback && !isLoopbackName(r.Host) {
			http.Error(w, "forbidden: this cordon serves on a loopback address and answers only requests addressed to it by a loopback name "+
				"(localhost, 127.0.0.1 or [::1]), and this one names host "+quoted(r.Host)+
				" (a defence against DNS rebinding): connect to http://127.0.0.1:PORT/mcp", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !slices.ContainsFunc(allowed, func(a string) bool { return sameOrigin(a, o) }) {
			http.Error(w, "forbidden: origin "+quoted(o)+" is not allowed: a web page may drive cordon only from one of the origins "+
				strings.Join(allowed, ", ")+" (a defence against DNS rebinding); to allow another, add it to [http] allowed_origins in the config",
				http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
