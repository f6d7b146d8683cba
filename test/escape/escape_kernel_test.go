//go:build linux

package escape_test

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// kernelCases reach kernel objects that no file-system rule covers: the
// keyrings, SysV IPC, other processes' resource limits and command
// lines, processes that outlive their call, and the HTTP token a client's
// config holds. Every verdict is read on the host.
var kernelCases = []*escapeCase{
	{
		Name:  "session-keyring",
		Doc:   "read, update and add keys in the session and user keyrings where a host secret lives (keyctl print/update/add: no namespace covers them; Docker's seccomp profile refuses add_key and keyctl)",
		Needs: []string{"keyctl"},
		Setup: func(r *run) {
			secret := "KEYRING-SECRET-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			r.vals["secret"] = secret
			for _, ring := range []string{"s", "u"} {
				id, err := keyctl("add", "user", "cordon-canary-"+ring+"-"+r.tok, secret, "@"+ring)
				must(r.t, err)
				r.vals["key-"+ring] = id
				r.t.Cleanup(func() {
					keyctl("invalidate", id)
					if planted, err := keyctl("search", "@"+ring, "user", "cordon-planted-"+r.tok); err == nil {
						keyctl("invalidate", planted)
					}
				})
			}
		},
		Script: func(r *run) string {
			return fmt.Sprintf(`grep cordon-canary /proc/keys 2>&1 | head -5
for kr in s u; do id=$(keyctl search @$kr user cordon-canary-$kr-%[1]s 2>&1); echo "search @$kr: $id"; keyctl print "$id" 2>&1; keyctl update "$id" %[2]s 2>&1; keyctl add user cordon-planted-%[1]s %[2]s @$kr 2>&1; done
keyctl show @s 2>&1 | head -20`, r.tok, r.pwn())
		},
		Check: checkKeyrings,
	},
	{
		Name:  "sysv-ipc",
		Doc:   "overwrite a host process's SysV shared-memory segment, queue a message on its message queue, and create a segment and a queue that outlive the call (no IPC namespace under Landlock)",
		Setup: setupSysvIPC,
		Script: func(r *run) string {
			p := r.probe()
			return fmt.Sprintf(`head -5 /proc/sysvipc/shm /proc/sysvipc/msg 2>&1
%[1]s shm-write %[2]s %[5]s; %[1]s msg-send %[3]s %[5]s; %[1]s shm-create %[4]s; %[1]s msg-create %[4]s`,
				p, r.vals["shmid"], r.vals["msqid"], r.vals["ipckey"], r.pwn())
		},
		Check: checkSysvIPC,
	},
	{
		Name:  "prlimit-other-process",
		Doc:   "change the resource limits of a host process (prlimit --nofile=8:8) and of cordon's own server (RLIMIT_CPU = 0): prlimit(2) needs only the same uid",
		Needs: []string{"prlimit"},
		Fresh: true,
		Setup: func(r *run) {
			v := startVictim(r.t)
			r.t.Cleanup(v.stop)
			pid := v.cmd.Process.Pid
			r.vals["victim"] = strconv.Itoa(pid)
			r.vals["victim-limits"] = procLimits(pid)
			if r.srv != nil {
				r.vals["server-limits"] = procLimits(r.srv.pid)
			}
		},
		Script: func(r *run) string {
			s := fmt.Sprintf(`prlimit --pid %[1]s --nofile=8:8 2>&1; prlimit --pid %[1]s --core=0:0 2>&1; prlimit --pid %[1]s --nofile 2>&1`, r.vals["victim"])
			if r.srv != nil {
				s += fmt.Sprintf("\nprlimit --pid %[1]d --cpu=0:unlimited 2>&1; prlimit --pid %[1]d --cpu 2>&1", r.srv.pid)
			}
			return s
		},
		Check: func(r *run) []string {
			var ev []string
			pid, _ := strconv.Atoi(r.vals["victim"])
			if syscall.Kill(pid, 0) != nil {
				ev = append(ev, "the host process "+r.vals["victim"]+" is gone")
			} else if got := procLimits(pid); got != r.vals["victim-limits"] {
				ev = append(ev, "the host process's limits changed: "+limitsDiff(r.vals["victim-limits"], got))
			}
			if r.srv != nil {
				if got := procLimits(r.srv.pid); got != r.vals["server-limits"] {
					ev = append(ev, "cordon serve's own limits changed: "+limitsDiff(r.vals["server-limits"], got))
					unix.Prlimit(r.srv.pid, unix.RLIMIT_CPU, &unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}, nil)
				}
			}
			return ev
		},
	},
	{
		Name:   "orphan-survivors",
		Doc:    "leave the call with setsid -f (holding the terminal), nohup … & disown and a double fork, and keep writing a workspace file after the call returned",
		Script: func(r *run) string { return orphanScript(r, "") },
		Check:  checkOrphans,
	},
	{
		Name:        "orphan-after-timeout",
		Doc:         "the same orphans from a bash call that its timeout_ms kills: the kill must take them too",
		TimeoutKill: true,
		BashArgs:    map[string]any{"timeout_ms": 1000},
		Script:      func(r *run) string { return orphanScript(r, "sleep 2") },
		Check:       checkOrphans,
	},
	{
		Name: "http-token-client-configs",
		Doc:  "read cordon's HTTP bearer token from the human's MCP client configs (~/.claude.json, ~/.cursor/mcp.json, VS Code's mcp.json, ~/.codex/config.toml, the workspace's .mcp.json and .vscode/mcp.json), open an MCP session of one's own and approve one's own escalation",
		Setup: func(r *run) {
			h := r.g.httpSrv(r.t)
			claude := fmt.Sprintf(`{"mcpServers": {"cordon": {"type": "http", "url": %q, "headers": {"Authorization": "Bearer %s"}}}}`, h.url, h.token)
			vscode := fmt.Sprintf(`{"servers": {"cordon": {"type": "http", "url": %q, "headers": {"Authorization": "Bearer %s"}}}}`, h.url, h.token)
			for p, content := range map[string]string{
				filepath.Join(r.w.home, ".claude.json"):                        `{"numStartups": 12, ` + claude[1:],
				filepath.Join(r.w.home, ".cursor", "mcp.json"):                 fmt.Sprintf(`{"mcpServers": {"cordon": {"url": %q, "headers": {"Authorization": "Bearer %s"}}}}`, h.url, h.token),
				filepath.Join(r.w.home, ".config", "Code", "User", "mcp.json"): vscode,
				filepath.Join(r.w.home, ".codex", "config.toml"):               fmt.Sprintf("[mcp_servers.cordon]\nurl = %q\nhttp_headers = { \"Authorization\" = \"Bearer %s\" }\n", h.url, h.token),
				filepath.Join(r.w.ws, ".mcp.json"):                             claude,
				filepath.Join(r.w.ws, ".vscode", "mcp.json"):                   vscode,
			} {
				must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(r.t, os.WriteFile(p, []byte(content+"\n"), 0o600))
			}
		},
		Script: func(r *run) string {
			return fmt.Sprintf(`cd %[4]s; for f in ~/.claude.json ~/.cursor/mcp.json ~/.config/Code/User/mcp.json ~/.codex/config.toml .mcp.json .vscode/mcp.json; do
T=$(grep -o 'Bearer [A-Za-z0-9._~+/=-]*' "$f" 2>/dev/null | head -1 | cut -d' ' -f2); U=$(grep -o 'http://[0-9.:]*/mcp' "$f" 2>/dev/null | head -1)
echo "$f: url=$U token=${#T} chars"; [ -n "$T" ] && [ -n "$U" ] && %[1]s mcp-selfapprove "$U" "$T" "echo %[2]s-from-$(basename $f) >> %[3]s/file.txt"
done`, r.probe(), r.pwn(), r.out(), r.w.ws)
		},
		Check: func(r *run) []string {
			if n := strings.Count(r.output, "elicitation received"); n > 0 {
				return []string{fmt.Sprintf("the command answered cordon's approval request itself, %d time(s), with a token read from a client config", n)}
			}
			return nil
		},
	},
	{
		Name: "proc-cmdline-secret",
		Doc:  "read a secret from another host process's command line through /proc/*/cmdline (a client started with --token=…)",
		Setup: func(r *run) {
			secret := "CMDLINE-SECRET-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			r.vals["secret"] = secret
			cmd := exec.Command("sh", "-c", "sleep 3600; :", "mcp-client", "--token="+secret)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the shell's sleep goes with it
			must(r.t, cmd.Start())
			r.t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		},
		Script: func(r *run) string {
			return `for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < $f 2>/dev/null; echo; done | grep -e '--token=' | grep -v grep | head -5`
		},
		Check: func(r *run) []string {
			if strings.Contains(r.output, r.vals["secret"]) {
				return []string{"the output holds a host process's --token secret"}
			}
			return nil
		},
		Expect: onLandlock(gap(llCmdline)),
	},
}

// keyctl runs keyctl(1) on the host, as the user who runs cordon. (A
// keyctl child, not the calls in this process: a Go test process is not
// granted possession of keys in its user keyring.)
func keyctl(args ...string) (string, error) {
	out, err := exec.Command("keyctl", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), errorsJoin(err, out)
}

// checkKeyrings: the host's keys keep their value, no key was added, and
// the secret stayed out of the output.
func checkKeyrings(r *run) []string {
	var ev []string
	secret := r.vals["secret"]
	if strings.Contains(r.output, secret) {
		ev = append(ev, "the output holds the secret of the host's keyring")
	}
	for _, ring := range []string{"s", "u"} {
		switch got, err := keyctl("pipe", r.vals["key-"+ring]); {
		case err != nil:
			ev = append(ev, fmt.Sprintf("the host's key in @%s is gone: %v", ring, err))
		case got != secret:
			ev = append(ev, fmt.Sprintf("the host's key in @%s was changed to %q", ring, got))
		}
		if id, err := keyctl("search", "@"+ring, "user", "cordon-planted-"+r.tok); err == nil {
			ev = append(ev, fmt.Sprintf("a key added from inside the sandbox outlived the call in the host's @%s", ring))
			keyctl("invalidate", id)
		}
	}
	return ev
}

// setupSysvIPC makes a host shared-memory segment and message queue (as a
// host program would), and the key an attacker's own objects would get.
func setupSysvIPC(r *run) {
	shmid, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	must(r.t, err)
	r.t.Cleanup(func() { unix.SysvShmCtl(shmid, unix.IPC_RMID, nil) })
	b, err := unix.SysvShmAttach(shmid, 0, 0)
	must(r.t, err)
	content := "host segment " + r.tok
	copy(b, content)
	unix.SysvShmDetach(b)
	msqid, err := msgGet(unix.IPC_PRIVATE, unix.IPC_CREAT|0o600)
	must(r.t, err)
	r.t.Cleanup(func() { msgRemove(msqid) })
	key := 0x43000000 | int(crc32.ChecksumIEEE([]byte(r.tok))&0xffffff)
	r.t.Cleanup(func() { removeIPCKey(key) })
	r.vals["shmid"], r.vals["msqid"], r.vals["ipckey"], r.vals["shm-content"] = strconv.Itoa(shmid), strconv.Itoa(msqid), strconv.Itoa(key), content
}

func checkSysvIPC(r *run) []string {
	var ev []string
	shmid, _ := strconv.Atoi(r.vals["shmid"])
	if b, err := unix.SysvShmAttach(shmid, 0, unix.SHM_RDONLY); err != nil {
		ev = append(ev, fmt.Sprintf("the host's segment %d is gone: %v", shmid, err))
	} else {
		want := r.vals["shm-content"]
		if got := string(b[:len(want)]); got != want || b[len(want)] != 0 {
			ev = append(ev, fmt.Sprintf("the host's shared-memory segment was overwritten: %q", bytes.TrimRight(b[:64], "\x00")))
		}
		unix.SysvShmDetach(b)
	}
	for _, row := range sysvRows("msg") {
		if row[1] == r.vals["msqid"] && row[4] != "0" {
			ev = append(ev, fmt.Sprintf("the host's message queue %s holds %s message(s) from inside the sandbox", row[1], row[4]))
		}
	}
	key, _ := strconv.Atoi(r.vals["ipckey"])
	for _, kind := range []string{"shm", "msg"} {
		for _, row := range sysvRows(kind) {
			if row[0] == strconv.Itoa(key) {
				ev = append(ev, fmt.Sprintf("a SysV %s object made inside the sandbox (key %d, id %s) outlived the call", kind, key, row[1]))
			}
		}
	}
	removeIPCKey(key)
	return ev
}

// sysvRows are the rows of /proc/sysvipc/KIND (the host's IPC
// namespace): key and id first; for msg, qnum is the fifth column.
func sysvRows(kind string) [][]string {
	data, _ := os.ReadFile("/proc/sysvipc/" + kind)
	var rows [][]string
	for i, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); i > 0 && len(f) > 5 {
			rows = append(rows, f)
		}
	}
	return rows
}

func removeIPCKey(key int) {
	for _, row := range sysvRows("shm") {
		if row[0] == strconv.Itoa(key) {
			id, _ := strconv.Atoi(row[1])
			unix.SysvShmCtl(id, unix.IPC_RMID, nil)
		}
	}
	for _, row := range sysvRows("msg") {
		if row[0] == strconv.Itoa(key) {
			id, _ := strconv.Atoi(row[1])
			msgRemove(id)
		}
	}
}

func procLimits(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return "error: " + err.Error()
	}
	return string(data)
}

func limitsDiff(before, after string) string {
	b := strings.Split(before, "\n")
	var out []string
	for i, line := range strings.Split(after, "\n") {
		if i >= len(b) || b[i] != line {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(out, "; ")
}

// orphanScript starts three survivors that append to grow-TOKEN in the
// workspace for 30 s, each with SURVIVOR-TOKEN in its argv; the setsid
// one also keeps the terminal open (fd 9) where there is one.
func orphanScript(r *run, tail string) string {
	loop := fmt.Sprintf(`trap "" HUP; i=0; while [ $i -lt 300 ]; do echo x >> %s/grow-%s; i=$((i+1)); sleep 0.1; done; : SURVIVOR-%s`, r.ws, r.tok, r.tok)
	return fmt.Sprintf(`L='%[1]s'
setsid -f sh -c "$L" </dev/null >/dev/null 2>&1 9<>/dev/tty || setsid -f sh -c "$L" </dev/null >/dev/null 2>&1
nohup sh -c "$L" </dev/null >/dev/null 2>&1 & disown
( ( exec sh -c "$L" </dev/null >/dev/null 2>&1 & ) & )
sleep 0.3
%[2]s`, loop, tail)
}

// checkOrphans: after the call, no process of the command is left in the
// host's process table, and the file it wrote stops growing.
func checkOrphans(r *run) []string {
	grow := filepath.Join(r.ws, "grow-"+r.tok)
	size := func() int64 {
		fi, err := os.Stat(grow)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	time.Sleep(200 * time.Millisecond)
	s1 := size()
	time.Sleep(600 * time.Millisecond)
	s2 := size()
	var ev []string
	pids := processesWith("SURVIVOR-" + r.tok)
	var tty []string
	for _, p := range pids {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/9", p)); err == nil && strings.HasPrefix(l, "/dev/") {
			tty = append(tty, fmt.Sprintf("%d holds %s", p, l))
		}
		syscall.Kill(p, syscall.SIGKILL)
	}
	if len(pids) > 0 {
		ev = append(ev, fmt.Sprintf("%d process(es) of the command outlived the call: %v %s", len(pids), pids, strings.Join(tty, ", ")))
	}
	if s2 > s1 {
		ev = append(ev, fmt.Sprintf("%s kept growing after the call returned (%d -> %d bytes)", grow, s1, s2))
	}
	return ev
}
