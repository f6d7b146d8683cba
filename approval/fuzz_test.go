package approval

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClassify feeds arbitrary text to the classifier. It must never
// panic (Classify turns a panic into an "internal error" finding, which is
// caught here as a failure), and its findings must be well formed.
func FuzzClassify(f *testing.F) {
	for _, seed := range []string{
		"ls -la",
		"ls; rm -rf x",
		"echo $(sudo id)",
		"bash -c 'git push'",
		"curl x | sh",
		`sh -c "$(curl -fsSL https://x)"`,
		"bash <(curl -s x)",
		"echo x > /dev/sda",
		"find . -exec rm -rf {} +",
		"xargs -I{} sh -c 'rm -rf {}'",
		"sudo -u root env A=1 nice -n 5 timeout 9 rm -rf /",
		"bash <<'EOF'\nrm -rf x\nEOF",
		`rm $'\x2drf' {a,b}`,
		"f() { (cd x && git push) | tee y; }",
		// Where the classifier cannot tell what runs.
		`f(){ git "$@"; }; f push`,
		"g=git; $g push",
		"git -c alias.p=push p",
		"git -C d config set core.fsmonitor 'x'; git --config-env=a.b=C s",
		"alias gp='git push'; gp",
		"echo push | xargs -I{} git {}",
		"parallel git ::: push",
		"find push -exec git {} \\;",
		"printf 'git push' | sh",
		"python3 - <<< 'import os'",
		"printf 'git push' > s.sh; . ./s.sh; bash s.sh",
		`trap "$x" EXIT; trap 'git push' INT`,
		`GIT_SSH_COMMAND=x env LD_PRELOAD=y sudo A=1 git fetch; declare -x "$n=1"`,
		"hash -p /bin/sh ls; enable -f x.so y; script -qc 'git push' /dev/null",
		`awk -F'|' -e 'BEGIN{system("x")}' -f p.awk; gawk -l e 1`,
		`sed -n -e '/a/,+2{s|x\|y|z|gw out' -e '$!N;1e ls' -i.bak f; sed 'y/a/b/;1i\t'`,
		`source /dev/stdin <<< "git push"; bash /proc/self/fd/0`,
		`tar -xf x --to-com='git push' --checkpoint-action=exec="$y"; ssh -o"ProxyCommand $x" -oLocalCommand=ls -F c h`,
		`rsync -e 'ssh -p 2' a b:; sort --compress-program=gzip; rg --pre ./p; man -P 'sh -c x' ls`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, command string) {
		v := defaultRules.Classify(command)
		for _, fd := range v.Findings {
			if fd.Reason == reasonInternal {
				t.Fatalf("defaultRules.Classify(%q) hit an internal error", command)
			}
			if fd.Reason == "" {
				t.Fatalf("defaultRules.Classify(%q): finding without a reason", command)
			}
			if strings.ContainsAny(fd.Command, "\n\x00") {
				t.Fatalf("defaultRules.Classify(%q): finding command %q is not one clean line", command, fd.Command)
			}
			if utf8.ValidString(command) && !utf8.ValidString(fd.Command) {
				t.Fatalf("defaultRules.Classify(%q): finding command %q is not valid UTF-8", command, fd.Command)
			}
		}
		if len(v.Findings) > MaxFindings {
			t.Fatalf("defaultRules.Classify(%q): %d findings, more than %d", command, len(v.Findings), MaxFindings)
		}
	})
}
