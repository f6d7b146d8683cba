package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox"
)

// What an approval question shows besides the model's words: what the
// call resolves to (SPEC §5, Escalation: "The question shows the effect").
// A model that can write the workspace can plant a build.sh in the
// directory a command runs in, point todo.txt at ~/.bashrc, or rewrite
// task.sh while the human reads it; so the question names the resolved
// directory, where a symlinked path leads and which files the command runs
// that the agent can write, and cordon pins all of it: a fingerprint of
// each is taken when asking and compared again immediately before the
// call starts. Any difference refuses the call, and nothing runs.

// Effect is what a call resolves to, as the question shows it.
type Effect struct {
	// Dir is the directory a command runs in, symlinks resolved.
	Dir string
	// Leads are the paths that go through a symlink, and where they lead.
	Leads []Lead
	// Writable are the files the command runs as program text that lie
	// where the agent can write (workspace content), with where each
	// leads when that is elsewhere.
	Writable []Lead
	// pins are the fingerprints of all of it, compared before the launch.
	pins []pin
}

// Lead is a path and where it leads ("" when it leads nowhere else).
type Lead struct {
	Path, Target string
	// Absent says the file does not exist yet (it is still pinned: if it
	// appears, the call is refused).
	Absent bool
}

// pin is the fingerprint of one thing the question showed or relied on.
type pin struct {
	What     string `json:"w"`           // the path as shown, or "the working directory"
	Resolved string `json:"r"`           // symlinks resolved; "" when nothing exists there
	ID       string `json:"i,omitempty"` // device:inode:type of what is there
	Content  string `json:"c,omitempty"` // size:mtime:sha256 of a regular file's content
}

// EncodePins is the effect's fingerprints as text, which the multi
// round-trip form carries in its signed request state.
func (e Effect) EncodePins() string {
	if len(e.pins) == 0 {
		return ""
	}
	b, _ := json.Marshal(e.pins)
	return string(b)
}

func decodePins(s string) ([]pin, error) {
	var pins []pin
	if s == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(s), &pins); err != nil {
		return nil, fmt.Errorf("the fingerprints of the question cannot be read: %v", err)
	}
	return pins, nil
}

// hashLimit is the largest file whose content is hashed; a larger one is
// pinned by its identity, size and modification time.
const hashLimit = 64 << 20

// fingerprint pins what p resolves to now. A path that does not exist is
// pinned as absent. withContent adds the content of a regular file.
func fingerprint(what, p string, withContent bool) pin {
	pn := pin{What: what, Resolved: resolvePath(p)}
	fi, err := os.Stat(pn.Resolved)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			pn.ID = "error:" + err.Error()
		}
		return pn
	}
	pn.ID = fileID(fi) + ":" + fi.Mode().Type().String()
	if !withContent || !fi.Mode().IsRegular() {
		return pn
	}
	pn.Content = fmt.Sprintf("%d:%d", fi.Size(), fi.ModTime().UnixNano())
	if fi.Size() > hashLimit {
		return pn
	}
	if f, err := os.Open(pn.Resolved); err == nil {
		h := sha256.New()
		if _, err := io.Copy(h, io.LimitReader(f, hashLimit+1)); err == nil {
			pn.Content += ":" + hex.EncodeToString(h.Sum(nil))
		}
		f.Close()
	}
	return pn
}

// resolvePath is p with every symlink on it resolved; the part that does
// not exist yet is kept as written beneath the deepest part that does.
func resolvePath(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// changes says what differs between the pins the question was asked with
// and those taken now, one phrase each; nil when nothing does.
func changes(asked, now []pin) []string {
	var out []string
	for _, a := range asked {
		i := slices.IndexFunc(now, func(n pin) bool { return n.What == a.What })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s is no longer what the call resolves to", a.What))
			continue
		}
		n := now[i]
		switch {
		case a.Resolved == "" && n.Resolved != "":
			out = append(out, fmt.Sprintf("%s now leads to %s (the question showed nothing there)", a.What, n.Resolved))
		case a.Resolved != n.Resolved:
			out = append(out, fmt.Sprintf("%s now leads to %s (the question showed %s)", a.What, n.Resolved, a.Resolved))
		case a.ID == "" && n.ID != "":
			out = append(out, fmt.Sprintf("%s was created", a.What))
		case a.ID != "" && n.ID == "":
			out = append(out, fmt.Sprintf("%s was removed", a.What))
		case a.ID != n.ID:
			out = append(out, fmt.Sprintf("%s was replaced by another file", a.What))
		case a.Content != n.Content:
			out = append(out, fmt.Sprintf("the content of %s changed", a.What))
		}
	}
	if len(now) > len(asked) {
		out = append(out, "the call now resolves to more files than the question showed")
	}
	return out
}

// modelWritable says whether the agent can write p, resolved or as named:
// beneath the workspace, the session tmp, or a writable root of the
// session's policy.
func modelWritable(roots []string, named, resolved string) bool {
	for _, r := range roots {
		if r != "" && (pathx.Within(named, r) || pathx.Within(resolved, r)) {
			return true
		}
	}
	return false
}

// writableRoots are where the agent can write in workspace-write, which a
// read-only session may have been in when the files were written.
func writableRoots(pol sandbox.ExecutionPolicy) []string {
	roots := slices.Concat([]string{pol.WorkspaceRoot, pol.TmpDir, pol.OwnDir}, pol.ExtraWriteAllow, pol.WritableRoots)
	if pol.WorkspaceReadOnly {
		roots = slices.DeleteFunc(roots, func(r string) bool { return r == pol.WorkspaceRoot })
		roots = append(roots, pol.TmpDir)
	}
	return roots
}

// bashEffect is what a bash command resolves to: the directory it runs in
// and the files it runs as program text.
func bashEffect(pol sandbox.ExecutionPolicy, rawCwd, command, pathEnv string) (Effect, *ToolError) {
	cwd, terr := resolveCwd(pol.WorkspaceRoot, rawCwd)
	if terr != nil {
		return Effect{}, terr
	}
	dir := fingerprint("the working directory", cwd, false)
	e := Effect{Dir: dir.Resolved, pins: []pin{dir}}
	roots := writableRoots(pol)
	files, complete := approval.NamedFiles(command)
	if !complete {
		return Effect{}, invalid("the command names more than %d programs and scripts, more than cordon shows and pins in an approval question: "+
			"write one script that does it all in the workspace and ask to run that file instead (bash ./task.sh)", approval.MaxNamedFiles)
	}
	for _, f := range files {
		if f.Lookup {
			if l, pn, ok := lookPath(roots, cwd, pathEnv, f.Path); ok {
				e.pins = append(e.pins, pn)
				if l != nil {
					e.Writable = append(e.Writable, *l)
				}
			}
			continue
		}
		base := cwd
		if f.Dir != "" {
			base = filepath.Join(cwd, f.Dir)
			if filepath.IsAbs(f.Dir) {
				base = filepath.Clean(f.Dir)
			}
		}
		var shown *pin
		for _, name := range append([]string{f.Path}, f.Alternatives...) {
			p := name
			if !filepath.IsAbs(p) {
				p = filepath.Join(base, p)
			}
			pn := fingerprint(p, p, true)
			e.pins = append(e.pins, pn)
			if shown == nil && (pn.ID != "" || name == f.Path && len(f.Alternatives) == 0) {
				shown = &pn
			}
		}
		if shown == nil || !modelWritable(roots, shown.What, shown.Resolved) {
			continue
		}
		l := Lead{Path: shown.What, Absent: shown.ID == ""}
		if shown.Resolved != shown.What {
			l.Target = shown.Resolved
		}
		e.Writable = append(e.Writable, l)
	}
	return e, nil
}

// pathEffect is what a file tool's path resolves to: where it leads when a
// symlink is on it.
func pathEffect(path string) Effect {
	pn := fingerprint(path, path, false)
	pn.ID = "" // the file written may be replaced; where the path leads may not change
	e := Effect{pins: []pin{pn}}
	if pn.Resolved != path {
		e.Leads = []Lead{{Path: path, Target: pn.Resolved}}
	}
	return e
}

// approvedEffect is what an approved call must still resolve to when it
// starts: the pins the human's question was asked with, and how to take
// them again.
type approvedEffect struct {
	asked   []pin
	retake  func() []pin
	current sandbox.Mode
	target  sandbox.Mode
	subject string
}

// check refuses the call when what the question showed has changed since:
// the human approved that, not this. It runs immediately before the launch.
func (a *approvedEffect) check() *ToolError {
	if a == nil || a.retake == nil {
		return nil
	}
	diff := changes(a.asked, a.retake())
	if len(diff) == 0 {
		return nil
	}
	msg := DenialMarker(a.current) + "\n" +
		"what the human was asked about has changed since the question was asked, so the call is refused as not approved and nothing ran (" + a.subject + "): " +
		strings.Join(diff, "; ") + ".\nIf the change is meant, call the tool again: the human is asked about what is there now."
	if a.target != "" {
		msg += "\n" + NotApprovedLine(a.target)
	}
	return &ToolError{Code: CodeEscalationDenied, Message: msg, Denied: true}
}

// pinEffect hands the caller of an approved call what its question showed,
// to check at the launch. A multi round-trip retry brings the fingerprints
// of the question the human answered in its signed state: those are the
// ones checked, not the ones taken on the retry.
func pinEffect(call Call, r authRequest, q Question, pol sandbox.ExecutionPolicy, target sandbox.Mode) *ToolError {
	current := pol.Mode
	if r.effect == nil || r.approved == nil {
		return nil
	}
	asked := q.Effect.pins
	if a, ok := call.Asker.(interface{ AskedPins() (string, bool) }); ok {
		if s, ok := a.AskedPins(); ok {
			pins, err := decodePins(s)
			if err != nil {
				return &ToolError{Code: CodeEscalationDenied, Denied: true,
					Message: DenialMarker(current) + "\n" + err.Error() + "; nothing ran"}
			}
			asked = pins
		}
	}
	subject := r.tool
	if r.command == "" {
		subject += " " + r.subject
	}
	*r.approved = approvedEffect{asked: asked, current: current, target: target, subject: subject,
		retake: func() []pin {
			// The policy the question was asked under: what the pins
			// name does not depend on the mode the answer grants.
			e, terr := r.effect(pol)
			if terr != nil {
				return nil
			}
			return e.pins
		}}
	// Checked at once too, before an allow_session widens the session's
	// mode on the strength of a question about what is no longer there.
	return r.approved.check()
}

// logFields adds what the question showed to its approval/request line.
func (e Effect) logFields(fields map[string]any) {
	if e.Dir != "" {
		fields["dir"] = e.Dir
	}
	for _, l := range e.Leads {
		fields["leads_to"] = l.Target
	}
	if len(e.Writable) > 0 {
		var paths []string
		for _, l := range e.Writable {
			paths = append(paths, l.Path)
		}
		fields["writable_programs"] = paths
	}
}

// shownChars is how many characters the effect's paths take in the dialog.
func (e Effect) shownChars() int {
	n := approval.ShowLine(e.Dir).Chars
	for _, l := range slices.Concat(e.Leads, e.Writable) {
		n += approval.ShowLine(l.Path).Chars + approval.ShowLine(l.Target).Chars
	}
	return n
}

// lookPath finds name through pathEnv as the shell would, and pins where
// it was found; only a program found where the agent can write is shown
// (and its content pinned): a PATH entry such as "." or node_modules/.bin
// makes "make" or "git" workspace content. ok is false when no PATH entry
// is a directory the agent can write, now or ever: nothing to pin.
func lookPath(roots []string, cwd, pathEnv, name string) (*Lead, pin, bool) {
	what := fmt.Sprintf("%s (found through PATH)", name)
	writableEntry := false
	found := ""
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if modelWritable(roots, dir, resolvePath(dir)) {
			writableEntry = true
		}
		if found != "" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			found = filepath.Join(dir, name)
		}
	}
	if !writableEntry {
		return nil, pin{}, false
	}
	if found == "" {
		return nil, pin{What: what}, true
	}
	pn := fingerprint(what, found, false)
	if !modelWritable(roots, found, pn.Resolved) {
		return nil, pn, true
	}
	pn = fingerprint(what, found, true)
	l := &Lead{Path: found}
	if pn.Resolved != found {
		l.Target = pn.Resolved
	}
	return l, pn, true
}
