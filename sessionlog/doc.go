// Package sessionlog keeps cordon's per-session audit log: one append-only
// JSON Lines file per session, every line chained to the one before it by a
// SHA-256 hash, so that the log can be replayed after a crash and checked
// for tampering.
//
// # Format
//
// A session's log is <dir>/<session-id>.jsonl, where dir is the sessions
// directory (cordon uses <state-dir>/sessions). Every line is exactly
//
//	{"seq":N,"time":"RFC3339Nano","session":"ID","type":"…","data":{…},"prev":"HEX"}
//
// with the keys in that order and no insignificant white space. seq is the
// line's 1-based number. prev is the lowercase hex SHA-256 of the previous
// line's bytes, without its newline. The first line's prev is the SHA-256 of
// the empty string (e3b0c442…b855), as if an empty line came before it: every
// line then carries a 64-digit prev and is checked by the same rule, with no
// special case a forger could hide behind. The first line is always
// session/start; no other line is.
//
// Lines are written by hand, not by encoding/json, and read back by a strict
// parser of that exact shape: the format is pinned by this package, not by
// whatever a future encoding/json does with escaping or key order, and a
// line that is not byte-for-byte what a writer produces is rejected.
//
// # Crashes
//
// A line is written with one write(2) under an exclusive lock and ends with
// the only newline it contains (JSON escapes newlines inside strings). An
// interrupted write therefore leaves a final fragment without a newline; on
// file systems that do not order data before metadata, a power cut can also
// leave a final newline-terminated line of garbage. Both are "torn": replay
// (Read, Open, Refresh) ignores them, and the next writer, which holds the
// lock and so knows no write is in progress, cuts them off before it appends,
// so the chain continues from the last complete line. Verify ignores a final
// fragment without a newline (a crash artefact, not damage) but reports a
// newline-terminated line that does not parse, because a completed write
// never produces one.
//
// sandbox/mode and approval/outcome events are fsynced before Append returns,
// whichever of Append or AppendSync is called: the spec makes their
// durability a precondition of the tool call proceeding. The first of them
// also makes the log's directory entry durable; session/start alone is not
// synced, so that starting a session waits on no disk.
//
// # What the chain can and cannot detect
//
// Every line but the last is protected by its successor: change one byte and
// either the line no longer parses or its hash no longer matches the next
// line's prev. The last line has no successor. Its damage is caught only by
// its own checks: the exact shape, the seq, the session id, the event type,
// its prev (which must match the line before it) and, for sandbox/mode, the
// closed schema of its data. A change that leaves all of those valid goes
// unnoticed: a different letter inside a free-form data string, a different
// digit of the time, or removing the final newline (the line then reads as
// torn and is ignored). Removing whole lines from the end is likewise
// invisible to any chain. Check reports the hash of the last line
// (Report.LastHash); recording it elsewhere anchors the tail.
//
// When line N+1's prev does not match line N, the chain alone cannot tell
// whether line N's content or line N+1's prev was changed. Line N+2 decides:
// if its prev matches line N+1, line N+1 is intact and line N is blamed;
// otherwise line N+1 is. When line N+1 is the last line, the error names both
// (LineError.Line and LineError.OrLine).
//
// # Concurrency
//
// A Log is safe for concurrent use by many goroutines. Writers in different
// processes (a serving cordon and `cordon mode --session ID MODE`) serialize
// on an exclusive flock(2) of the log file itself, held around "read what
// other writers appended since this writer last looked, cut off a torn tail,
// write the line, fsync". Readers take no lock: they stop at the last
// complete line.
//
// # Liveness
//
// A serving process holds an exclusive flock on <id>.lock, beside the log,
// from Create or Open until Close; the kernel drops it when the process dies,
// however it dies. List and IsLive test it without blocking. It is a separate
// file because a lifetime lock on the log itself would block every other
// writer's exclusive append lock. Exclusive, because one session has one
// server: a second Open of a live session fails with ErrSessionLive. Lock
// files are never removed: unlinking a lock file while another process may be
// about to lock it would let two processes each hold "the" lock.
//
// Files are opened close-on-exec, so sandboxed commands spawned by the
// server neither inherit the log nor keep the session looking live.
//
// On platforms without flock (Windows, Plan 9, wasm) the package builds but
// coordinates nothing across processes and reports every session as ended;
// cordon's sandbox backends exist only on Linux and macOS.
package sessionlog
