package fsfence_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/cordonhq/cordon/fsfence"
)

// exampleDirs makes a workspace and a fake home with a credential in it.
func exampleDirs() (base, ws, home string) {
	base, err := os.MkdirTemp("", "fsfence-example-")
	if err != nil {
		log.Fatal(err)
	}
	base, _ = filepath.EvalSymlinks(base) // roots must be canonical (macOS: /var -> /private/var)
	ws, home = filepath.Join(base, "ws"), filepath.Join(base, "home")
	_ = os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	_ = os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	_ = os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("secret"), 0o600)
	return base, ws, home
}

func ExampleFence_WriteFile() {
	base, ws, _ := exampleDirs()
	defer os.RemoveAll(base)

	fence, err := fsfence.New(fsfence.Config{
		WritableRoots: []string{ws},
		Protected:     []string{filepath.Join(ws, ".git", "hooks")},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Inside the root: parents are created, the write is atomic.
	res, err := fence.WriteFile(filepath.Join(ws, "notes", "todo.txt"), []byte("hello"))
	fmt.Println(res.Created, res.Bytes, err)

	// A protected path is refused, even one that does not exist yet.
	_, err = fence.WriteFile(filepath.Join(ws, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh"))
	var denied *fsfence.DeniedError
	fmt.Println(errors.Is(err, fsfence.ErrDenied), errors.As(err, &denied) && denied.Reason == fsfence.ReasonProtected)

	// So is a sibling that merely shares the root's prefix.
	_, err = fence.WriteFile(ws+"-evil/x", nil)
	fmt.Println(errors.As(err, &denied), denied.Reason)
	// Output:
	// true 5 <nil>
	// true true
	// true outside the writable roots
}

func ExampleFence_OpenFile() {
	base, ws, home := exampleDirs()
	defer os.RemoveAll(base)

	fence, err := fsfence.New(fsfence.Config{
		WritableRoots: []string{ws},
		ReadDeny:      []string{filepath.Join(home, ".ssh")},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(ws, "README"), []byte("read me"), 0o644)

	f, err := fence.OpenFile(filepath.Join(ws, "README"))
	if err != nil {
		log.Fatal(err)
	}
	data, _ := io.ReadAll(f)
	f.Close()
	fmt.Println(string(data))

	// A symlink in the workspace does not make a credential readable.
	_ = os.Symlink(filepath.Join(home, ".ssh", "id_ed25519"), filepath.Join(ws, "key"))
	_, err = fence.OpenFile(filepath.Join(ws, "key"))
	fmt.Println(errors.Is(err, fsfence.ErrDenied))

	// Missing files are ordinary errors, not denials.
	_, err = fence.OpenFile(filepath.Join(ws, "missing"))
	fmt.Println(errors.Is(err, fs.ErrNotExist), errors.Is(err, fsfence.ErrDenied))
	// Output:
	// read me
	// true
	// true false
}

func ExampleFence_WalkDir() {
	base, _, home := exampleDirs()
	defer os.RemoveAll(base)
	_ = os.WriteFile(filepath.Join(home, "notes.txt"), []byte("hi"), 0o644)

	fence, err := fsfence.New(fsfence.Config{ReadDeny: []string{filepath.Join(home, ".ssh")}})
	if err != nil {
		log.Fatal(err)
	}
	_ = fence.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(home, path)
		if errors.Is(err, fsfence.ErrDenied) {
			fmt.Println("skipped", rel)
			return nil // skip the denied directory, keep walking
		}
		if err != nil {
			return err
		}
		fmt.Println(rel)
		return nil
	})
	// Output:
	// .
	// .ssh
	// skipped .ssh
	// notes.txt
}

func ExampleFence_Edit() {
	base, ws, _ := exampleDirs()
	defer os.RemoveAll(base)
	fence, err := fsfence.New(fsfence.Config{WritableRoots: []string{ws}})
	if err != nil {
		log.Fatal(err)
	}
	p := filepath.Join(ws, "run.sh")
	_ = os.WriteFile(p, []byte("echo old\n"), 0o755)

	_, err = fence.Edit(p, func(old []byte) ([]byte, error) {
		return []byte("echo new\n"), nil
	})
	data, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	fmt.Print(string(data))
	fmt.Println(fi.Mode().Perm(), err)
	// Output:
	// echo new
	// -rwxr-xr-x <nil>
}
