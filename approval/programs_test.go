package approval

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNamedFiles(t *testing.T) {
	type nf = NamedFile
	cases := []struct {
		command string
		want    []NamedFile
	}{
		{"ls -la", nil},
		{"./build.sh", []nf{{Path: "./build.sh"}}},
		{"bash ./task.sh arg", []nf{{Path: "./task.sh"}}},
		{"bash task.sh", []nf{{Path: "task.sh"}}},
		{"sh -x -- run.sh", []nf{{Path: "run.sh"}}},
		{"bash -c './inner.sh'", []nf{{Path: "./inner.sh"}}},
		{"bash -s < task.sh", nil},
		{"python3 -W ignore tool.py", []nf{{Path: "tool.py"}}},
		{"python3 -c 'print(1)'", nil},
		{"python -m http.server", nil},
		{"node scripts/x.js", []nf{{Path: "scripts/x.js"}}},
		{"source env.sh; . ./more.sh", []nf{{Path: "env.sh"}, {Path: "./more.sh"}}},
		{"make test", []nf{{Path: "GNUmakefile", Alternatives: []string{"makefile", "Makefile"}}}},
		{"make -f build.mk -C sub", []nf{{Path: "build.mk", Dir: "sub"}}},
		{"npm run build", []nf{{Path: "package.json"}}},
		{"cd sub && ./build.sh", []nf{{Path: "./build.sh", Dir: "sub"}}},
		{"cd /opt/x; cd y; bash run.sh", []nf{{Path: "run.sh", Dir: "/opt/x/y"}}},
		{"cd $D; ./a.sh", []nf{{Path: "./a.sh"}}},
		{"sudo -u bob ./deploy.sh", []nf{{Path: "./deploy.sh"}}},
		{"timeout 5 env A=1 bash job.sh", []nf{{Path: "job.sh"}}},
		{"echo ok | /usr/bin/env", []nf{{Path: "/usr/bin/env"}}},
		{"$X/build.sh; bash $S", nil},
		{"if true; then ( tools/gen.sh ); fi", []nf{{Path: "tools/gen.sh"}}},
		{"((((", nil},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, NamedFiles(c.command), c.command)
	}
}
