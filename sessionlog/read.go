package sessionlog

import (
	"fmt"
	"io"
	"os"
)

// logName is the file name of a session's log inside the sessions directory.
func logName(id string) string { return id + ".jsonl" }

// Read returns the events of session id in dir, checked as Check checks
// them. A torn last line (see the package doc) is ignored, so a log a crash
// interrupted replays up to its last complete event. On a bad line it
// returns the events before it along with a *LineError, so that a caller
// can show what is intact; a caller deciding a sandbox mode must not use
// them. A missing session's error matches fs.ErrNotExist.
func Read(dir, id string) ([]Event, error) {
	if err := ValidateSessionID(id); err != nil {
		return nil, fmt.Errorf("sessionlog: %w", err)
	}
	f, err := openInDir(dir, logName(id), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("sessionlog: session %s: %w", id, err)
	}
	defer f.Close()
	evs, err := readEvents(f, id)
	if err != nil {
		return evs, fmt.Errorf("session %s: %w", id, err)
	}
	return evs, nil
}

// ReadFile returns the events of the log at path, as Read does, without
// expecting a particular session id.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sessionlog: %w", err)
	}
	defer f.Close()
	evs, err := ReadEvents(f)
	if err != nil {
		return evs, fmt.Errorf("%s: %w", path, err)
	}
	return evs, nil
}

// ReadEvents returns the events of a log read from r, as Read does.
func ReadEvents(r io.Reader) ([]Event, error) {
	return readEvents(r, "")
}

func readEvents(r io.Reader, session string) ([]Event, error) {
	var evs []Event
	_, _, err := newChain(session).replay(r, false, func(e Event) { evs = append(evs, e) })
	return evs, err
}

// openInDir opens name inside dir through an os.Root, so that nothing but a
// file beneath dir can be opened whatever name holds: traversal resistance
// as a property of the call, on top of ValidateSessionID.
func openInDir(dir, name string, flag int, perm os.FileMode) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.OpenFile(name, flag, perm)
}

// removeInDir removes name inside dir, with openInDir's guarantee.
func removeInDir(dir, name string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Remove(name)
}
