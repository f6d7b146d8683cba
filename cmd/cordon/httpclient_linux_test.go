//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// httpServer is `cordon serve --http` on a loopback port, spoken to as an
// MCP client would (Streamable HTTP, raw JSON-RPC).
type httpServer struct {
	*stdioServer
	addr, token string
}

// startHTTPServe starts `cordon serve --http 127.0.0.1:0` with a token
// given in the environment (both backends accept it).
func startHTTPServe(t *testing.T, e *cfgEnv, args ...string) *httpServer {
	t.Helper()
	token := fmt.Sprintf("tok-%d", time.Now().UnixNano())
	t.Setenv("CORDON_HTTP_TOKEN", token)
	srv := startServe(t, e, append([]string{"--http", "127.0.0.1:0"}, args...)...)
	var logged struct {
		Addr string `json:"addr"`
	}
	require.NoError(t, json.Unmarshal([]byte(srv.waitLog(t, "serving MCP over HTTP at /mcp")), &logged))
	return &httpServer{stdioServer: srv, addr: logged.Addr, token: token}
}

// httpSession is one MCP session of an httpServer.
type httpSession struct {
	srv    *httpServer
	id     string
	nextID atomic.Int64
	client *http.Client
}

// post sends one JSON-RPC message and returns the response to it (nil for
// a notification), from a JSON body or an event stream.
func (s *httpServer) post(sessionID string, msg map[string]any, client *http.Client) (map[string]any, http.Header, error) {
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, "http://"+s.addr+"/mcp", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		return nil, resp.Header, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	if _, isRequest := msg["id"]; !isRequest {
		io.Copy(io.Discard, resp.Body)
		return nil, resp.Header, nil
	}
	var datas [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				datas = append(datas, []byte(strings.TrimSpace(d)))
			}
		}
	} else {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, nil, err
		}
		datas = append(datas, b)
	}
	for _, d := range datas {
		var m map[string]any
		if json.Unmarshal(d, &m) == nil && m["id"] != nil && fmt.Sprint(m["id"]) == fmt.Sprint(msg["id"]) {
			return m, resp.Header, nil
		}
	}
	return nil, resp.Header, fmt.Errorf("no response to %v", msg["method"])
}

// open starts a session: initialize, then notifications/initialized.
func (s *httpServer) open() (*httpSession, error) {
	client := &http.Client{Timeout: 2 * time.Minute}
	_, h, err := s.post("", map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "lifetime-test", "version": "1"}}}, client)
	if err != nil {
		return nil, err
	}
	sess := &httpSession{srv: s, id: h.Get("Mcp-Session-Id"), client: client}
	if sess.id == "" {
		return nil, fmt.Errorf("no Mcp-Session-Id")
	}
	_, _, err = s.post(sess.id, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, client)
	return sess, err
}

// call calls a tool and returns its structured result and its text; a
// tool error is an error.
func (s *httpSession) call(tool string, args map[string]any) (map[string]any, string, error) {
	id := s.nextID.Add(1)
	resp, _, err := s.srv.post(s.id, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}}, s.client)
	if err != nil {
		return nil, "", err
	}
	if e, ok := resp["error"]; ok {
		return nil, "", fmt.Errorf("%s: %v", tool, e)
	}
	res, _ := resp["result"].(map[string]any)
	var text strings.Builder
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok && m["type"] == "text" {
			text.WriteString(fmt.Sprint(m["text"]))
		}
	}
	structured, _ := res["structuredContent"].(map[string]any)
	if isErr, _ := res["isError"].(bool); isErr {
		return structured, text.String(), fmt.Errorf("%s: %s", tool, text.String())
	}
	return structured, text.String(), nil
}

// end ends the session (HTTP DELETE).
func (s *httpSession) end() error {
	req, err := http.NewRequest(http.MethodDelete, "http://"+s.srv.addr+"/mcp", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.srv.token)
	req.Header.Set("Mcp-Session-Id", s.id)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	// The client's idle connection is no descriptor of the session's.
	s.client.CloseIdleConnections()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("DELETE: HTTP %d", resp.StatusCode)
	}
	return nil
}

// hostProcessesWith lists the host's processes whose argv holds token,
// but this test's own.
func hostProcessesWith(token string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte(token)) && !bytes.Contains(cmdline, []byte("-test.run")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// describe names each process for a failure message.
func describe(pids []int) string {
	var b strings.Builder
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		fmt.Fprintf(&b, "%d [%s]: %s\n", pid, strings.TrimSpace(string(stat)), strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return b.String()
}

// awaitNone waits (generously) for every process with token to be gone
// and returns those left, killing them so that a failure leaves nothing.
func awaitNone(token string) []int {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && len(hostProcessesWith(token)) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	left := hostProcessesWith(token)
	return left
}

// killLeft kills what a failed test left (each by its pid).
func killLeft(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// descendantsOf lists the processes beneath pid.
func descendantsOf(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
				out = append(out, descendantsOf(c)...)
			}
		}
	}
	return out
}

// openFDs counts pid's open file descriptors.
func openFDs(pid int) int {
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(entries)
}
