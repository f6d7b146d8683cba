package winacl

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProbeArgv(t *testing.T) {
	permissive, write := ProbeArgv(`C:\probe dir\workspace\probe-ok`, `C:\probe dir\canary`)
	assert.Equal(t, []string{"cmd.exe", "/d", "/c", "exit", "0"}, permissive)
	assert.Equal(t, "cmd.exe", write[0])
	joined := strings.Join(write, " ")
	assert.Contains(t, joined, `ok> C:\probe dir\workspace\probe-ok`)
	assert.Contains(t, joined, `breach>> C:\probe dir\canary || exit 1`,
		"a failed redirection only shows through ||")
	for _, a := range write[3:] {
		if strings.ContainsAny(a, " ") {
			assert.True(t, a == `C:\probe dir\workspace\probe-ok` || a == `C:\probe dir\canary`,
				"only the paths may need quoting (cmd.exe does not undo \\\" escapes): %q", a)
		}
	}
}
