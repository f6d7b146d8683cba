package pathx

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithin(t *testing.T) {
	cases := []struct {
		path, dir string
		want      bool
	}{
		{"/ws", "/ws", true},
		{"/ws/a/b", "/ws", true},
		{"/ws-evil", "/ws", false},
		{"/ws-evil/x", "/ws", false},
		{"/", "/ws", false},
		{"/ws/../etc", "/ws", false},
		{"/anything", "/", true},
		{"/ws/..x", "/ws", true},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Within(c.path, c.dir), "%s in %s", c.path, c.dir)
		assert.Equal(t, c.want, withinRel(c.path, c.dir), "filepath.Rel's answer: %s in %s", c.path, c.dir)
	}
}

// FuzzWithin: Within answers as filepath.Rel does, for any two paths.
func FuzzWithin(f *testing.F) {
	for _, seed := range [][2]string{
		{"/ws", "/ws"}, {"/ws/a", "/ws/"}, {"/ws-evil", "/ws"}, {"/ws/../etc", "/ws"}, {"/a", "/"},
		{"//ws//a/./b", "/ws"}, {"/ws/..x", "/ws"}, {"ws/a", "ws"}, {"/ws", "ws"}, {"/", "/"}, {"/ws/a/..", "/ws/a"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, path, dir string) {
		if filepath.IsAbs(path) && cleanAbs(path) != filepath.Clean(path) {
			t.Errorf("cleanAbs(%q) = %q, filepath.Clean says %q", path, cleanAbs(path), filepath.Clean(path))
		}
		if Within(path, dir) != withinRel(path, dir) {
			t.Errorf("Within(%q, %q) = %v, filepath.Rel says %v", path, dir, Within(path, dir), withinRel(path, dir))
		}
	})
}
