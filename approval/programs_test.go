package approval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNamedFiles(t *testing.T) {
	type nf = NamedFile
	lk := func(name string) NamedFile { return NamedFile{Path: name, Lookup: true} }
	cases := []struct {
		command string
		want    []NamedFile
	}{
		{"ls -la", []nf{lk("ls")}},
		{"echo hi; cd x; true", nil},
		{"./build.sh", []nf{{Path: "./build.sh"}}},
		{"bash ./task.sh arg", []nf{lk("bash"), {Path: "./task.sh"}}},
		{"bash task.sh", []nf{lk("bash"), {Path: "task.sh"}}},
		{"sh -x -- run.sh", []nf{lk("sh"), {Path: "run.sh"}}},
		{"bash -c './inner.sh'", []nf{lk("bash"), {Path: "./inner.sh"}}},
		{"bash -s < task.sh", []nf{lk("bash")}},
		{"python3 -W ignore tool.py", []nf{lk("python3"), {Path: "tool.py"}}},
		{"python3 -c 'print(1)'", []nf{lk("python3")}},
		{"python -m http.server", []nf{lk("python")}},
		{"node scripts/x.js", []nf{lk("node"), {Path: "scripts/x.js"}}},
		{"source env.sh; . ./more.sh", []nf{{Path: "env.sh"}, {Path: "./more.sh"}}},
		{"make test", []nf{lk("make"), {Path: "GNUmakefile", Alternatives: []string{"makefile", "Makefile"}}}},
		{"make -f build.mk -C sub", []nf{lk("make"), {Path: "build.mk", Dir: "sub"}}},
		{"npm run build", []nf{lk("npm"), {Path: "package.json"}}},
		{"cd sub && ./build.sh", []nf{{Path: "./build.sh", Dir: "sub"}}},
		{"cd /opt/x; cd y; bash run.sh", []nf{lk("bash"), {Path: "run.sh", Dir: "/opt/x/y"}}},
		{"cd $D; ./a.sh", []nf{{Path: "./a.sh"}}},
		{"sudo -u bob ./deploy.sh", []nf{lk("sudo"), {Path: "./deploy.sh"}}},
		{"timeout 5 env A=1 bash job.sh", []nf{lk("timeout"), lk("env"), lk("bash"), {Path: "job.sh"}}},
		{"echo ok | /usr/bin/env", []nf{{Path: "/usr/bin/env"}}},
		{"$X/build.sh; bash $S", []nf{lk("bash")}},
		{"if true; then ( tools/gen.sh ); fi", []nf{{Path: "tools/gen.sh"}}},
		{"((((", nil},
	}
	for _, c := range cases {
		got, complete := NamedFiles(c.command)
		assert.Equal(t, c.want, got, c.command)
		assert.True(t, complete, c.command)
	}
	many := strings.Repeat("./a.sh; ", MaxNamedFiles) // the same one, once
	for i := 0; i < MaxNamedFiles; i++ {
		many += fmt.Sprintf("./s%d.sh; ", i)
	}
	got, complete := NamedFiles(many + "./evil.sh")
	assert.False(t, complete, "one too many is reported, never dropped silently")
	assert.Len(t, got, MaxNamedFiles)
}
