package approval

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyDangerous(t *testing.T) {
	tests := []struct {
		name    string
		command string
		// want is the reason of at least one finding, or "" for any.
		want string
	}{
		// Plain rules.
		{"recursive rm", "rm -rf x", "recursive delete"},
		{"rm -r", "rm -r dir", "recursive delete"},
		{"rm -R", "rm -R dir", "recursive delete"},
		{"rm -fr", "rm -fr dir", "recursive delete"},
		{"rm --recursive", "rm --recursive dir", "recursive delete"},
		{"rm abbreviated long option", "rm --rec dir", "recursive delete"},
		{"rm separate flags", "rm -v -r dir", "recursive delete"},
		{"rm -r before --", "rm -r -- -x", "recursive delete"},
		{"upper-case name", "RM -rf x", "recursive delete"},
		{"find -delete", "find . -name '*.o' -delete", "deletes every file find matches"},
		{"shred", "shred -u secret", "overwrites files beyond recovery"},
		{"git push", "git push origin main", "pushes to a remote"},
		{"git push after option with value", "git -C /repo push", "pushes to a remote"},
		{"git push after bare option", "git --no-pager push", "pushes to a remote"},
		{"git reset --hard", "git reset --hard HEAD~1", "discards uncommitted changes"},
		{"git clean -fdx", "git clean -fdx", "deletes untracked files"},
		{"git clean --force", "git clean --force", "deletes untracked files"},
		{"git checkout -- .", "git checkout -- .", "discards uncommitted changes"},
		{"git restore .", "git restore .", "discards uncommitted changes"},
		{"sudo", "sudo ls", "privilege escalation: runs as another user"},
		{"sudo by path", "/usr/bin/sudo id", "privilege escalation: runs as another user"},
		{"doas", "doas rm x", "privilege escalation: runs as another user"},
		{"chmod -R", "chmod -R 777 .", "recursive permission or ownership change"},
		{"chown -R", "chown -R me .", "recursive permission or ownership change"},
		{"dd", "dd if=/dev/zero of=x bs=1M count=1", "raw copy that can overwrite disks"},
		{"mkfs.ext4", "mkfs.ext4 /dev/sdb1", "creates a file system, erasing the device"},
		{"kill -9 -1", "kill -9 -1", "signals every process you can reach"},
		{"kill -- -1", "kill -- -1", "signals every process you can reach"},
		{"shutdown", "shutdown -h now", "shuts down or restarts the machine"},
		{"reboot", "reboot", "shuts down or restarts the machine"},
		{"systemctl restart", "systemctl restart nginx", "changes system services or power state"},
		{"systemctl --user stop", "systemctl --user stop foo", "changes system services or power state"},
		{"crontab -r", "crontab -r", "deletes the crontab"},
		{"comment after command", "rm -rf x # clean up", "recursive delete"},

		// Every part of a command line.
		{"list", "ls; rm -rf x", "recursive delete"},
		{"and list in subshell", "ls && (cd x && rm -rf y)", "recursive delete"},
		{"or list", "false || git push", "pushes to a remote"},
		{"pipeline stage", "ls | sudo tee x", "privilege escalation: runs as another user"},
		{"block", "{ rm -rf x; }", "recursive delete"},
		{"if body", "if true; then git push; fi", "pushes to a remote"},
		{"for body", `for f in *; do rm -r "$f"; done`, "recursive delete"},
		{"while body", "while true; do sudo id; done", "privilege escalation: runs as another user"},
		{"case body", "case $x in a) rm -rf x;; esac", "recursive delete"},
		{"function body", "f() { rm -rf x; }", "recursive delete"},
		{"command substitution", "echo $(sudo id)", "privilege escalation: runs as another user"},
		{"backticks", "echo `sudo id`", "privilege escalation: runs as another user"},
		{"process substitution", "diff <(sudo cat /etc/shadow) x", "privilege escalation: runs as another user"},
		{"assignment only", "a=$(rm -rf x)", "recursive delete"},
		{"substitution in double quotes", `echo "$(rm -rf x)"`, "recursive delete"},
		{"substitution in a heredoc body", "cat <<EOF\n$(git push)\nEOF", "pushes to a remote"},
		{"substitution in a parameter default", "echo ${x:-$(sudo id)}", "privilege escalation: runs as another user"},
		{"test clause", "[[ $(git push) ]]", "pushes to a remote"},
		{"arithmetic", "echo $((1 + $(sudo id -u)))", "privilege escalation: runs as another user"},
		{"background", "nohup rm -rf x &", "recursive delete"},
		{"negated", "! git push", "pushes to a remote"},

		// Quote removal and expansion.
		{"backslash", `\rm -rf x`, "recursive delete"},
		{"double-quoted name", `"rm" -rf x`, "recursive delete"},
		{"empty quotes inside name", `r''m -rf x`, "recursive delete"},
		{"mixed quotes", `r"m" '-'rf x`, "recursive delete"},
		{"single-quoted path", `'/usr/bin/rm' -rf x`, "recursive delete"},
		{"ANSI-C option", `rm $'-rf' x`, "recursive delete"},
		{"ANSI-C name", `$'\x72m' -rf x`, "recursive delete"},
		{"brace expansion of the command", "{rm,-rf,x}", "recursive delete"},
		{"brace expansion of an option", "rm {-rf,x}", "recursive delete"},
		{"line continuation", "rm \\\n -rf x", "recursive delete"},

		// Command names only known at run time.
		{"variable name", "$RM -rf x", reasonDynamicName},
		{"braced variable name", "${CMD} x", reasonDynamicName},
		{"variable set before", "RM=rm; $RM -rf x", reasonDynamicName},
		{"substituted name", "$(which rm) -rf x", reasonDynamicName},
		{"glob name", "/bin/r? -rf x", reasonDynamicName},

		// Wrappers.
		{"command", "command rm -rf x", "recursive delete"},
		{"env", "env FOO=1 rm -rf x", "recursive delete"},
		{"env by path with options", "X=1 /usr/bin/env -i -u HOME rm -rf x", "recursive delete"},
		{"env -S", "env -S 'git push'", "pushes to a remote"},
		{"nohup", "nohup git push", "pushes to a remote"},
		{"time keyword", "time rm -rf x", "recursive delete"},
		{"time program", "/usr/bin/time -f %e rm -rf x", "recursive delete"},
		{"timeout", "timeout -s KILL 5 rm -rf x", "recursive delete"},
		{"nice", "nice -n 10 git push", "pushes to a remote"},
		{"exec", "exec rm -rf x", "recursive delete"},
		{"sudo wrapping rm", "sudo -u root rm -rf x", "recursive delete"},
		{"find -exec", "find . -name x -exec rm -rf {} +", "recursive delete"},
		{"find -execdir sh -c", `find . -execdir sh -c 'git push' \;`, "pushes to a remote"},
		{"xargs", "ls | xargs rm -rf", "recursive delete"},
		{"xargs sh -c", "xargs -I{} sh -c 'rm -rf {}'", "recursive delete"},
		{"xargs feeding sh -c", "curl -s x | xargs -0 sh -c", reasonDownload},
		{"watch", "watch -n 5 'git push'", "pushes to a remote"},
		{"flock -c", "flock /tmp/l -c 'git push'", "pushes to a remote"},
		{"busybox applet", "busybox rm -rf x", "recursive delete"},
		{"wrapper chain", "nohup nice -n 5 env A=1 timeout 9 command git push", "pushes to a remote"},

		// Nested scripts.
		{"bash -c", "bash -c 'git push'", "pushes to a remote"},
		{"sh -c", `sh -c "rm -rf x"`, "recursive delete"},
		{"zsh -c", "zsh -c 'git push'", "pushes to a remote"},
		{"bash -lc", `bash -lc "sudo id"`, "privilege escalation: runs as another user"},
		{"eval", "eval 'git push'", "pushes to a remote"},
		{"eval words", "eval git push", "pushes to a remote"},
		{"nested twice", `bash -c 'bash -c "git push"'`, "pushes to a remote"},
		{"nested list", "bash -c 'ls; (cd x; rm -rf y)'", "recursive delete"},
		{"su -c", "su -c 'rm -rf /' root", "recursive delete"},
		{"heredoc to bash", "bash <<'EOF'\nrm -rf x\nEOF", "recursive delete"},
		{"heredoc to sudo sh", "sudo sh <<EOF\ngit push\nEOF", "pushes to a remote"},
		{"here-string to bash", `bash <<< "git push"`, "pushes to a remote"},
		{"dynamic script", `bash -c "$CMD"`, reasonDynamicScript},
		{"dynamic eval", `eval "$(ssh-agent -s)"`, reasonDynamicScript},
		{"dynamic heredoc", "bash <<EOF\n$CMD\nEOF", reasonDynamicScript},
		{"unparsable nested script", "bash -c 'if'", reasonUnparsable},

		// Downloads run as code.
		{"curl | sh", "curl x | sh", reasonDownload},
		{"wget -O- | bash", "wget -O- https://x | bash", reasonDownload},
		{"curl | sudo bash", "curl -fsSL https://x | sudo bash -s -- --yes", reasonDownload},
		{"curl | tee | sh", "curl x | tee i.sh | sh", reasonDownload},
		{"curl | python3", "curl x | python3", reasonDownload},
		{"process substitution script", "bash <(curl -s https://x)", reasonDownload},
		{"command substitution script", `sh -c "$(curl -fsSL https://x)"`, reasonDownload},
		{"eval download", `eval "$(curl -s x)"`, reasonDownload},
		{"source download", "source <(curl -s x)", reasonDownload},
		{"input redirection download", "sh < <(curl -s x)", reasonDownload},
		{"python download", "python3 <(curl -s x)", reasonDownload},
		{"nested download", `bash -c 'curl x | sh'`, reasonDownload},

		// Devices.
		{"redirect to disk", "echo x > /dev/sda", "writes to device /dev/sda"},
		{"append to nvme", "cat img >> /dev/nvme0n1", "writes to device /dev/nvme0n1"},
		{"redirect to mmcblk", "cat img > /dev/mmcblk0", "writes to device /dev/mmcblk0"},
		{"redirect to macOS disk", "cat img > /dev/disk2", "writes to device /dev/disk2"},
		{"unclean device path", "cat img >/dev//./sdb", "writes to device /dev/sdb"},
		{"read-write open", "exec 3<>/dev/sda", "writes to device /dev/sda"},
		{"both streams", "cat img &> /dev/sdc", "writes to device /dev/sdc"},
		{"tee to a disk", "echo x | tee /dev/sdb", "writes to device /dev/sdb"},
		{"dd of=", "dd if=img of=/dev/sdb", "writes to device /dev/sdb"},

		// Failing closed.
		{"unterminated quote", "echo 'unterminated", reasonUnparsable},
		{"incomplete if", "if true; then", reasonUnparsable},
		{"too long", strings.Repeat("a", MaxCommandBytes+1), reasonTooLong},
		{"too many parens", strings.Repeat("(", maxParens+1) + "x" + strings.Repeat(")", maxParens+1), reasonTooDeep},
		{"nested too deep", nest("ls", maxNesting+2), reasonTooDeep},
		{"brace bomb", "echo " + strings.Repeat("{a,b}", 14), reasonBraces},

		// Where the classifier cannot tell what runs, it asks (SPEC §5,
		// ask-dangerous). git push hidden each way the issue found it.
		{"push in a function", "f(){ git push origin main; }; f", reasonFunction},
		{"push through a function's arguments", `f(){ git "$@"; }; f push`, reasonFunction},
		{"harmless function", "f() { echo hi; }; f", reasonFunction},
		{"function keyword", `function p { git pu\sh; }; p`, reasonFunction},
		{"function shadowing a command", "ls() { command ls -la; }; ls", reasonFunction},
		{"push through a variable name", "$CMD push", reasonDynamicName},
		{"push through an assigned variable", "g=git; $g push", reasonDynamicName},
		{"command name built by substitution", "$(printf gi)t push", reasonDynamicName},
		{"subcommand from a variable", "op=push; git $op origin", reasonSubcommand},
		{"subcommand after run-time options", "git $FLAGS push", reasonSubcommand},
		{"subcommand from a glob", "git pu* origin", reasonSubcommand},
		{"git alias by -c", "git -c alias.p=push p", "sets git config alias.p, which can change what git runs"},
		{"git alias by -c, shell alias", "git -c 'alias.p=!git push' p", "sets git config alias.p, which can change what git runs"},
		{"git -c core.sshCommand", "git -c core.sshCommand='sh -c x' fetch", "sets git config core.sshcommand, which can change what git runs"},
		{"git -c core.pager", "git -c core.pager='sh -c x' log", "sets git config core.pager, which can change what git runs"},
		{"git -c include.path", "git -c include.path=x.cfg status", "sets git config include.path, which can change what git runs"},
		{"git --config-env", "git --config-env=alias.p=P p", "sets git config alias.p, which can change what git runs"},
		{"git -c run-time key", `git -c "$k=push" p`, reasonDynamicGitConf},
		{"git config alias", "git config alias.p push && git p", "sets git config alias.p, which can change what git runs"},
		{"git config set alias", "git -C sub config set alias.p '!git push'", "sets git config alias.p, which can change what git runs"},
		{"git config of a run-time key", `git config "$k" push`, reasonDynamicGitConf},
		{"git -c fsmonitor program", "git -c core.fsmonitor=./x status", "sets git config core.fsmonitor, which can change what git runs"},
		{"git --exec-path", "git --exec-path=./bin status", "git --exec-path"},
		{"GIT_SSH_COMMAND before git", "GIT_SSH_COMMAND='sh -c x' git fetch", "sets GIT_SSH_COMMAND, which can change what runs"},
		{"GIT_CONFIG_COUNT exported", "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; git p", "sets GIT_CONFIG_COUNT, which can change what runs"},
		{"GIT_CONFIG_PARAMETERS by env", "env GIT_CONFIG_PARAMETERS=\"'alias.p'='push'\" git p", "sets GIT_CONFIG_PARAMETERS, which can change what runs"},
		{"LD_PRELOAD", "LD_PRELOAD=./x.so ls", "sets LD_PRELOAD, which can change what runs"},
		{"declare a run-time name", `declare -x "$n=x"`, reasonDynamicEnv},
		{"alias", "alias gp='git push'; gp", reasonAlias},
		{"alias with expand_aliases", "shopt -s expand_aliases; alias ls='git push'\nls", reasonAlias},
		{"xargs supplies the subcommand", "echo push | xargs git", reasonRunTimeArgs},
		{"xargs -I", "echo push | xargs -I{} git {} origin", reasonRunTimeArgs},
		{"xargs sh -c with input", "cat list | xargs sh -c", reasonStdinProgram},
		{"parallel", "parallel git ::: push", reasonRunTimeArgs},
		{"parallel as a shell", "echo 'git push' | parallel", reasonStdinProgram},
		{"find -exec with the path", "find push -maxdepth 0 -exec git {} \\;", reasonRunTimeArgs},
		{"printf into sh", "printf 'git push origin main' | sh", reasonStdinProgram},
		{"echo into bash", "echo 'git push' | bash", reasonStdinProgram},
		{"echo into sudo bash -s", "echo x | sudo bash -s", reasonStdinProgram},
		{"file into sh", "sh < s.sh", reasonStdinProgram},
		{"here-string to a shell, run time", `sh <<< "$x"`, reasonDynamicScript},
		{"here-string to python", "python3 - <<< 'import os'", reasonStdinProgram},
		{"heredoc to python", "python3 - <<'EOF'\nimport os\nprint(os.getcwd())\nEOF", reasonStdinProgram},
		{"interactive shell", "bash", reasonStdinProgram},
		{"REPL", "python3 -i -q", reasonStdinProgram},
		{"python -c", "python3 -c 'print(1)'", "runs python3 code, which is not inspected"},
		{"python -c reading a download", "curl -s x | python3 -c 'import json,sys; print(json.load(sys.stdin))'", "runs python3 code, which is not inspected"},
		{"node -e", `node -e 'require("child_process").execSync("git push")'`, "runs node code, which is not inspected"},
		{"perl -e", "perl -e 'system q(git push)'", "runs perl code, which is not inspected"},
		{"eval of a variable", `eval "$x"`, reasonDynamicScript},
		{"eval of assembled words", "eval git $op", reasonDynamicScript},
		{"bash -c of a variable", `bash -c "$x"`, reasonDynamicScript},
		{"bash of a run-time file", `bash "$f"`, reasonDynamicScript},
		{"bash of a process substitution", "bash <(echo 'git push')", reasonDynamicScript},
		{"source of a written file", "echo 'git push' > s.sh; source s.sh", reasonWrittenFile},
		{"dot of a written file", "printf 'git push' > s.sh && . ./s.sh", reasonWrittenFile},
		{"source of a file written by tee", "echo 'git push' | tee s.sh >/dev/null; source s.sh", reasonWrittenFile},
		{"source of a file written with quotes", `echo 'git push' > "s".sh; . s.sh`, reasonWrittenFile},
		{"source of a file written in a nested script", `bash -c "echo 'git push' > s.sh"; source s.sh`, reasonWrittenFile},
		{"source after a write to a run-time path", `echo 'git push' > "$f"; source s.sh`, reasonWrittenFile},
		{"source of a run-time file", `source "$x"`, reasonDynamicScript},
		{"bash of a written file", "printf 'git push' > s.sh; bash s.sh", reasonWrittenFile},
		{"python of a written file", "echo 'import os; os.system(\"git push\")' > x.py; python3 x.py", reasonWrittenFile},
		{"run a written file", "printf 'git push' > s.sh; chmod +x s.sh; ./s.sh", reasonWrittenFile},
		{"trap", "trap 'git push' EXIT", "pushes to a remote"},
		{"trap of a variable", `trap "$x" EXIT`, reasonDynamicScript},
		{"hash -p", "hash -p /bin/sh ls; ls", reasonCommandPath},
		{"enable -f", "enable -f ./x.so x; x", reasonLoadsBuiltin},
		{"script -c", "script -qc 'git push' /dev/null", "pushes to a remote"},
		{"command substitution as the command", "`echo git` push", reasonDynamicName},
		{"tar --to-command", "tar -xf x.tar --to-command='git push'", "pushes to a remote"},
		{"tar abbreviated option", "tar -xf x.tar --to-com='sh -c \"$x\"'", reasonDynamicScript},
		{"tar checkpoint exec", "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='git push' .", "pushes to a remote"},
		{"tar -I", "tar -I 'sh -c \"git push\"' -xf x", "pushes to a remote"},
		{"rsync -e", "rsync -e 'sh -c \"git push\"' a b:", "pushes to a remote"},
		{"ssh ProxyCommand", "ssh -o ProxyCommand='git push' host", "pushes to a remote"},
		{"ssh attached ProxyCommand", `ssh -o"ProxyCommand $x" host`, reasonDynamicScript},
		{"ssh -F written", "printf 'ProxyCommand git push' > c; ssh -F c host", reasonWrittenFile},
		{"scp -S", "scp -S ./x.sh a b:", "runs a file"},
		{"sort --compress-program", "sort --compress-program='git push' x", "pushes to a remote"},
		{"rg --pre", "rg --pre \"$p\" foo", reasonDynamicScript},
		{"man -P", "man -P 'sh -c \"git push\"' ls", "pushes to a remote"},
		{"LESSOPEN", "LESSOPEN='|git push %s' less x", "sets LESSOPEN, which can change what runs"},
		{"source of standard input", `source /dev/stdin <<< "git push"`, reasonStdinProgram},
		{"bash of standard input", "printf 'git push' | bash /dev/fd/0", reasonStdinProgram},
		{"awk system", `awk 'BEGIN { system("git push") }'`, reasonAwkRuns},
		{"awk pipe to a shell", `awk '{ print | "sh" }' cmds.txt`, reasonAwkRuns},
		{"gawk -e", `gawk -e 'BEGIN { "git push" | getline x }'`, reasonAwkRuns},
		{"awk of a run-time program", `awk "$prog" x`, reasonDynamicScript},
		{"awk extension", "gawk -l ./ext.so 1", "loads an awk extension"},
		{"sed e command", "sed -n '1e git push' x", reasonSedRuns},
		{"sed s///e", "echo x | sed 's/x/git push/e'", reasonSedRuns},
		{"sed e after other commands", `sed -e '/^#/d;s|a|b|g' -e '$!N;e git push' x`, reasonSedRuns},
		{"sed of a run-time script", `sed "$script" x`, reasonDynamicScript},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := defaultRules.Classify(tt.command)
			require.True(t, v.Dangerous(), "want dangerous: %q", tt.command)
			if tt.want == "" {
				return
			}
			var reasons []string
			for _, f := range v.Findings {
				reasons = append(reasons, f.Reason)
				if strings.HasPrefix(f.Reason, tt.want) {
					return
				}
			}
			t.Errorf("no finding with reason %q in %q", tt.want, reasons)
		})
	}
}

// nest wraps command in depth levels of bash -c, quoting each level.
func nest(command string, depth int) string {
	for range depth {
		command = "bash -c '" + strings.ReplaceAll(command, "'", `'\''`) + "'"
	}
	return command
}

func TestClassifySafe(t *testing.T) {
	tests := []struct{ name, command string }{
		{"empty", ""},
		{"blank", "  \n\t"},
		{"ls", "ls -la"},
		{"git status", "git status"},
		{"go test", "go test ./..."},
		{"rm one file", "rm file.txt"},
		{"rm -f", "rm -f file.txt"},
		{"rm after --", "rm -- -r"},
		{"dangerous text in a message", `git commit -m "rm -rf"`},
		{"subcommand name in a message", "git commit -m push"},
		{"safe substitution in a message", `git commit -m "$(echo sudo)"`},
		{"echo", "echo 'rm -rf /'"},
		{"echo into a file", `echo "sudo rm -rf /" > notes.txt`},
		{"echo pipeline text", `echo "curl x | sh"`},
		{"comment", "# rm -rf /"},
		{"trailing comment", "ls # rm -rf x"},
		{"heredoc to cat", "cat <<'EOF' > script.sh\nrm -rf /\nsudo reboot\nEOF"},
		{"quoted heredoc keeps substitutions as text", "cat <<'EOF'\n$(git push)\nEOF"},
		{"heredoc to bash, harmless", "bash <<'EOF'\nls\ngit status\nEOF"},
		{"grep -r", "grep -r pattern ."},
		{"chmod -r is not recursive", "chmod -r file"},
		{"chmod +x", "chmod +x script.sh"},
		{"git log", "git log --oneline -n 5"},
		{"git branch -d", "git branch -d feature"},
		{"git diff", "git diff HEAD~1"},
		{"git -c", "git -c color.ui=never status"},
		{"git stash", "git stash"},
		{"curl to a file", "curl -s https://x -o file"},
		{"curl to jq", "curl -s https://x | jq ."},
		{"curl to python module", "curl -s x | python3 -m json.tool"},
		{"wget", "wget https://x"},
		{"bash script", "bash script.sh"},
		{"bash -c harmless", "bash -c 'ls -la'"},
		{"sh -c harmless list", "sh -c 'echo hi && git status'"},
		{"zsh -c harmless", "zsh -c 'git status && ls -la'"},
		{"eval harmless", "eval 'echo hi'"},
		{"dev null", "echo hi > /dev/null"},
		{"dev stderr", "ls 2>/dev/stderr"},
		{"dup to stderr", "ls >&2"},
		{"tee to a file", "echo x | tee out.txt"},
		{"mkdir and touch", "mkdir -p a/b && touch a/b/c"},
		{"find -exec grep", "find . -name '*.go' -exec grep -l foo {} +"},
		{"find -depth -lname", "find . -depth -lname x"},
		{"xargs grep", "xargs -0 grep foo"},
		{"env", "env GOOS=linux go build ./..."},
		{"time", "time go test ./..."},
		{"npm install", "npm install"},
		{"kill -15", "kill -15 1234"},
		{"kill -9", "kill -9 1234"},
		{"systemctl status", "systemctl status nginx"},
		{"make", "make build"},
		{"pipeline", "cat file | sort | uniq -c | head -n 5"},
		{"test", "[ -f x ] && echo yes"},
		{"export", `export PATH="$HOME/bin:$PATH"`},
		{"command path with a variable directory", `"$HOME/go/bin/golangci-lint" run`},
		{"loop", "for i in 1 2 3; do echo $i; done"},
		{"truncate is a plain write", "truncate -s 0 log.txt"},
		{"ssh", "ssh host ls"},
		{"sudoku is not sudo", "sudoku --easy"},
		{"rsync", "rsync -av src/ dst/"},
		{"tar", "tar -czf x.tgz dir"},
		{"cp", "cp a b"},
		{"brace expansion", "echo {a,b}"},
		{"redirect to a variable", `echo x > "$out"`},

		// Plainly safe, with the checks for hidden commands in force.
		{"git commit", `git add -A && git commit -m "fix: push the button"`},
		{"git -c identity", "git -c user.name=a -c user.email=a@b commit -qm x"},
		{"git -c color", "git -c color.ui=always diff"},
		{"git -c pager cat", "git -c core.pager=cat log"},
		{"git -c fsmonitor off", "git -c core.fsmonitor=false -c core.hooksPath=/dev/null commit -qm x"},
		{"git config identity", "git config user.email a@b && git config --get user.name"},
		{"git config of a program key, guarded by the sandbox", "git -C sub config core.fsmonitor 'touch x; false'"},
		{"git config read", "git config core.pager; git config --list; git config get alias.p"},
		{"git -C a run-time directory", `git -C "$dir" status`},
		{"git log with a run-time format", `git log --format="$fmt" -n 1`},
		{"PAGER=cat", "PAGER=cat git log -n 3"},
		{"GOFLAGS", "GOFLAGS=-mod=mod go build ./..."},
		{"go build", "go build ./... && go vet ./..."},
		{"npm test", "npm test"},
		{"grep pipeline", "cat go.mod | grep -n require | sort | uniq | head -n 3"},
		{"xargs grep", "git ls-files | xargs grep -n TODO"},
		{"xargs wc", "find . -name '*.go' -print0 | xargs -0 wc -l"},
		{"find -exec grep", "find . -name '*.go' -exec grep -l foo {} +"},
		{"find -exec without the path", "find . -maxdepth 1 -exec date \\;"},
		{"source a venv", "source .venv/bin/activate && python3 -m pytest -q"},
		{"dot a file", ". ./env.sh && go test ./..."},
		{"bash a script", "bash scripts/check.sh"},
		{"python a script", "python3 tools/gen.py --out x"},
		{"run a built program", "./bin/tool --help"},
		{"python version", "python3 --version"},
		{"bash version", "bash --version"},
		{"node version", "node -v && npm -v && perl -v && php -v"},
		{"trap reset", "trap - EXIT"},
		{"trap ignore", "trap '' INT; go test ./..."},
		{"alias list", "alias"},
		{"hash", "hash -r"},
		{"write then cat", "echo hi > notes.txt && cat notes.txt"},
		{"python module", "python3 -m json.tool data.json"},
		{"awk print", `awk -F'|' '{ s += $2 } END { print s }' data.txt`},
		{"sed substitute in place", `sed -i.bak -e 's/foo/bar/g' -e '/^$/d' main.go`},
		{"sed with other delimiters", `sed -n 's|/usr/local|/opt|gp; y/abc/xyz/; 1i\header' x`},
		{"sed print range", `sed -n '/start/,/end/{p}' x`},
		{"sed --sandbox", "sed --sandbox 's/x/y/e' x"},
		{"tar with a compressor", "tar -I zstd -xf x.tar.zst && tar czf out.tgz dir"},
		{"rsync over ssh", "rsync -av -e 'ssh -p 2222' src/ host:dst/"},
		{"ssh with a proxy jump", "ssh -o ProxyCommand='ssh -W %h:%p bastion' -o StrictHostKeyChecking=no host uptime"},
		{"sort with a compressor", "sort -S 1G --compress-program=gzip big.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := defaultRules.Classify(tt.command)
			assert.False(t, v.Dangerous(), "want safe: %q, got %v", tt.command, v.Findings)
		})
	}
}

func TestClassifyFindings(t *testing.T) {
	tests := []struct {
		command string
		want    []Finding
	}{
		{"ls; rm -rf x", []Finding{{"rm -rf x", "recursive delete"}}},
		{"bash -c 'git push'", []Finding{{"git push", "pushes to a remote"}}},
		{"sudo rm -rf /", []Finding{
			{"sudo rm -rf /", "privilege escalation: runs as another user"},
			{"sudo rm -rf /", "recursive delete"},
		}},
		{"curl -s x | sh", []Finding{{"curl -s x | sh", reasonDownload}}},
		{"echo x >/dev/sda; git push", []Finding{
			{"echo x >/dev/sda", "writes to device /dev/sda"},
			{"git push", "pushes to a remote"},
		}},
		{"rm -rf a; rm -rf a", []Finding{{"rm -rf a", "recursive delete"}}},
		{"rm -rf a\nrm -rf b", []Finding{{"rm -rf a", "recursive delete"}, {"rm -rf b", "recursive delete"}}},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			assert.Equal(t, tt.want, defaultRules.Classify(tt.command).Findings)
		})
	}
}

func TestClassifyParseFailure(t *testing.T) {
	v := defaultRules.Classify("echo 'oops")
	require.Len(t, v.Findings, 1)
	assert.Equal(t, "echo 'oops", v.Findings[0].Command)
	assert.True(t, strings.HasPrefix(v.Findings[0].Reason, "could not parse: "), v.Findings[0].Reason)
}

func TestVerdictSummary(t *testing.T) {
	assert.Equal(t, "", Verdict{}.Summary())
	assert.Equal(t, "dangerous command: rm -rf x (recursive delete)", defaultRules.Classify("rm -rf x").Summary())
	assert.Equal(t,
		"dangerous commands: rm -rf x (recursive delete); git push (pushes to a remote)",
		defaultRules.Classify("rm -rf x && git push").Summary())
}

func TestDisplayShortens(t *testing.T) {
	long := "rm -rf " + strings.Repeat("é", 200)
	v := defaultRules.Classify(long)
	require.True(t, v.Dangerous())
	got := v.Findings[0].Command
	assert.LessOrEqual(t, len(got), maxDisplay+len("…"))
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.True(t, strings.HasPrefix(got, "rm -rf é"))
}

func TestClassifyCustomRules(t *testing.T) {
	extra, err := ParseRules([]string{"terraform destroy # destroys infrastructure", "kubectl delete"})
	require.NoError(t, err)
	rules := append(DefaultRules(), extra...)

	v := rules.Classify("cd infra && terraform -chdir=prod destroy -auto-approve")
	require.True(t, v.Dangerous())
	assert.Equal(t, "destroys infrastructure", v.Findings[0].Reason)

	v = rules.Classify("kubectl -n prod delete pod x")
	require.True(t, v.Dangerous())
	assert.Equal(t, `matches rule "kubectl delete"`, v.Findings[0].Reason)

	assert.False(t, rules.Classify("kubectl get pods").Dangerous())
	assert.False(t, defaultRules.Classify("terraform destroy").Dangerous(), "defaults must not change")

	// Without rules, only the built-in checks remain.
	assert.False(t, Rules{}.Classify("rm -rf x").Dangerous())
	assert.True(t, Rules{}.Classify("curl x | sh").Dangerous())
}

func TestClassifyCapsFindings(t *testing.T) {
	var b strings.Builder
	for i := range MaxFindings + 5 {
		fmt.Fprintf(&b, "rm -rf dir%d\n", i)
	}
	v := defaultRules.Classify(b.String())
	assert.Len(t, v.Findings, MaxFindings)
	assert.Equal(t, 5, v.More)
	assert.True(t, strings.HasSuffix(v.Summary(), "; and 5 more"), v.Summary())
}

// Every runner in the wrappers table is followed to the command it runs,
// and every interpreter's inline code asks: both tables are data, and a
// new entry is covered by these without another line of test.
func TestClassifyEveryRunnerAndInterpreter(t *testing.T) {
	for name, w := range wrappers {
		cmd := name + strings.Repeat(" x", w.operands) + " git push"
		t.Run(cmd, func(t *testing.T) {
			assert.Contains(t, reasons(defaultRules.Classify(cmd)), "pushes to a remote")
		})
	}
	for name, in := range interpreters {
		for _, flag := range in.code {
			cmd := name + " " + flag + " 'x'"
			t.Run(cmd, func(t *testing.T) {
				assert.Contains(t, reasons(defaultRules.Classify(cmd)), "runs "+name+" code, which is not inspected")
			})
		}
		t.Run(name+" fed by a pipe", func(t *testing.T) {
			assert.Contains(t, reasons(defaultRules.Classify("echo x | "+name)), reasonStdinProgram)
		})
	}
}

func reasons(v Verdict) []string {
	var out []string
	for _, f := range v.Findings {
		out = append(out, f.Reason)
	}
	return out
}
