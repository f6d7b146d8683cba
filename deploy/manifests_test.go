//go:build linux

package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/cordonhq/cordon/internal/testenv"
)

// obj is one Kubernetes object as decoded from YAML.
type obj = map[string]any

// get walks a path of keys (strings) and indexes (ints) through obj; nil
// where the path does not exist.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string {
	s, _ := get(v, path...).(string)
	return s
}

func list(v any, path ...any) []any {
	l, _ := get(v, path...).([]any)
	return l
}

func decodeYAML(t *testing.T, data []byte, what string) []obj {
	t.Helper()
	var out []obj
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var o obj
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, what)
		if o != nil {
			out = append(out, o)
		}
	}
}

// kustomizeObjects are what `kubectl apply -k deploy/DIR` applies: its
// resources, the generated ConfigMaps and the namespace it sets.
func kustomizeObjects(t *testing.T, dir string) []obj {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	var k struct {
		Namespace          string   `yaml:"namespace"`
		Resources          []string `yaml:"resources"`
		ConfigMapGenerator []struct {
			Name  string   `yaml:"name"`
			Files []string `yaml:"files"`
		} `yaml:"configMapGenerator"`
	}
	require.NoError(t, yaml.Unmarshal(data, &k))
	var out []obj
	for _, r := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, r))
		require.NoError(t, err)
		out = append(out, decodeYAML(t, b, r)...)
	}
	for _, g := range k.ConfigMapGenerator {
		d := map[string]any{}
		for _, f := range g.Files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			d[filepath.Base(f)] = string(b)
		}
		out = append(out, obj{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": g.Name, "namespace": k.Namespace}, "data": d})
	}
	// Every manifest names its namespace itself, and the same as the
	// kustomization: applied without kustomize they land there too.
	for _, o := range out {
		if str(o, "kind") != "Namespace" {
			assert.Equal(t, k.Namespace, str(o, "metadata", "namespace"), "%s %s", str(o, "kind"), str(o, "metadata", "name"))
		}
	}
	// Every file of the directory is either applied or an example.
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	require.NoError(t, err)
	for _, f := range files {
		b := filepath.Base(f)
		if b != "kustomization.yaml" && !strings.HasSuffix(b, ".example.yaml") {
			assert.Contains(t, k.Resources, b, "a manifest the kustomization leaves out")
		}
	}
	return out
}

// helm finds the helm binary: $HELM, else the one `make helm` built,
// else PATH.
func helm(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	if home, err := os.UserHomeDir(); err == nil {
		built, _ := filepath.Glob(filepath.Join(home, ".cache", "cordon-deploy", "helm-*", "helm"))
		if len(built) > 0 {
			slices.Sort(built)
			return built[len(built)-1]
		}
	}
	h, err := exec.LookPath("helm")
	if err != nil {
		testenv.SkipUnlessCI(t, "helm is not installed: make helm builds it")
	}
	return h
}

func helmTemplate(t *testing.T, args ...string) []obj {
	t.Helper()
	// namespace.create renders the namespace and its PodSecurity labels,
	// which checkKit checks.
	cmd := exec.Command(helm(t), append([]string{"template", "cordon", "./helm/cordon", "--namespace", "cordon",
		"--set", "namespace.create=true"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "helm template: %s", stderr.String())
	return decodeYAML(t, out, "helm template")
}

func find(objs []obj, kind, name string) obj {
	for _, o := range objs {
		if str(o, "kind") == kind && (name == "" || str(o, "metadata", "name") == name) {
			return o
		}
	}
	return nil
}

// serveFlags are the flags `cordon COMMAND --help` of the real binary lists.
func commandFlags(t *testing.T, command string) []string {
	t.Helper()
	out, err := exec.Command(cordonBin(), command, "--help").CombinedOutput()
	require.NoError(t, err, string(out))
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[a-z][a-z-]*)`).FindAllStringSubmatch(string(out), -1) {
		flags = append(flags, m[1])
	}
	require.Contains(t, flags, "--state-dir", "the help's flag list did not parse")
	return flags
}

func flagsOf(args []any) []string {
	var out []string
	for _, a := range args {
		if s, _ := a.(string); strings.HasPrefix(s, "--") {
			name, _, _ := strings.Cut(s, "=")
			out = append(out, name)
		}
	}
	return out
}

func flagValue(args []any, name string) string {
	for i, a := range args {
		if s, _ := a.(string); s == name && i+1 < len(args) {
			v, _ := args[i+1].(string)
			return v
		} else if v, ok := strings.CutPrefix(s, name+"="); ok {
			return v
		}
	}
	return ""
}

func boolAt(v any, path ...any) (bool, bool) {
	b, ok := get(v, path...).(bool)
	return b, ok
}

func intAt(v any, path ...any) int {
	switch n := get(v, path...).(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return -1
}

// checkRestricted checks what the Pod Security Standard "restricted" asks
// of a pod template, container by container (the API server enforces it
// in the namespace; this keeps a manifest from being refused there).
func checkRestricted(t *testing.T, what string, pod any) {
	t.Helper()
	for _, k := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		b, _ := boolAt(pod, k)
		assert.False(t, b, "%s: %s", what, k)
	}
	for _, v := range list(pod, "volumes") {
		assert.Nil(t, get(v, "hostPath"), "%s: a hostPath volume", what)
	}
	podNonRoot, _ := boolAt(pod, "securityContext", "runAsNonRoot")
	podSeccomp := str(pod, "securityContext", "seccompProfile", "type")
	containers := append(slices.Clone(list(pod, "initContainers")), list(pod, "containers")...)
	require.NotEmpty(t, containers, what)
	for _, c := range containers {
		name := what + "/" + str(c, "name")
		sc := get(c, "securityContext")
		ape, ok := boolAt(sc, "allowPrivilegeEscalation")
		assert.True(t, ok && !ape, "%s: allowPrivilegeEscalation must be false", name)
		ro, _ := boolAt(sc, "readOnlyRootFilesystem")
		assert.True(t, ro, "%s: readOnlyRootFilesystem", name)
		priv, _ := boolAt(sc, "privileged")
		assert.False(t, priv, "%s: privileged", name)
		assert.Contains(t, list(sc, "capabilities", "drop"), "ALL", "%s: drop ALL", name)
		assert.Empty(t, list(sc, "capabilities", "add"), "%s: no capability added", name)
		nonRoot, set := boolAt(sc, "runAsNonRoot")
		assert.True(t, (set && nonRoot) || (!set && podNonRoot), "%s: runAsNonRoot", name)
		if uid := intAt(sc, "runAsUser"); uid != -1 {
			assert.NotZero(t, uid, "%s: runAsUser", name)
		}
		seccomp := str(sc, "seccompProfile", "type")
		if seccomp == "" {
			seccomp = podSeccomp
		}
		assert.Contains(t, []string{"RuntimeDefault", "Localhost"}, seccomp, "%s: seccompProfile", name)
	}
}

// checkKit checks a rendering of the kit (the manifests or the chart):
// security, and that the StatefulSet runs cordon as cordon really works.
func checkKit(t *testing.T, objs []obj, name string) {
	ns := find(objs, "Namespace", "")
	require.NotNil(t, ns, "a Namespace")
	assert.Equal(t, "restricted", str(ns, "metadata", "labels", "pod-security.kubernetes.io/enforce"))
	for _, o := range objs {
		if n := str(o, "metadata", "namespace"); n != "" {
			assert.Equal(t, str(ns, "metadata", "name"), n, "%s %s in the restricted namespace", str(o, "kind"), str(o, "metadata", "name"))
		}
	}
	for _, o := range objs {
		if k := str(o, "kind"); k == "StatefulSet" || k == "Deployment" || k == "DaemonSet" {
			checkRestricted(t, k+" "+str(o, "metadata", "name"), get(o, "spec", "template", "spec"))
		}
	}

	sts := find(objs, "StatefulSet", name)
	require.NotNil(t, sts, "StatefulSet %s", name)
	pod := get(sts, "spec", "template", "spec")
	assert.Equal(t, 10001, intAt(pod, "securityContext", "runAsUser"), "the image's user")
	auto, ok := boolAt(pod, "automountServiceAccountToken")
	assert.True(t, ok && !auto, "no service account token for confined commands")
	c := list(pod, "containers")[0]
	args := list(c, "args")
	require.Equal(t, "serve", get(args, 0), "the image's entrypoint is cordon: args start with the command")
	serveFlags := commandFlags(t, "serve")
	for _, f := range flagsOf(args) {
		assert.Contains(t, serveFlags, f, "cordon serve has no flag %s", f)
	}
	assert.Equal(t, "$(POD_NAME)", flagValue(args, "--replica"), "--replica from the pod's name")
	env := map[string]any{}
	for _, e := range list(c, "env") {
		env[str(e, "name")] = e
	}
	assert.Equal(t, "metadata.name", str(env["POD_NAME"], "valueFrom", "fieldRef", "fieldPath"))
	assert.NotEmpty(t, str(env["CORDON_HTTP_TOKEN"], "valueFrom", "secretKeyRef", "name"), "the token from a Secret")

	probe := list(c, "startupProbe", "exec", "command")
	require.GreaterOrEqual(t, len(probe), 2)
	assert.Equal(t, []any{"cordon", "test"}, probe[:2], "the startup probe proves containment")
	testFlags := commandFlags(t, "test")
	for _, f := range flagsOf(probe) {
		assert.Contains(t, testFlags, f, "cordon test has no flag %s", f)
	}
	for _, f := range []string{"--workspace", "--state-dir", "--config"} {
		assert.Equal(t, flagValue(args, f), flagValue(probe, f), "the probe tests what the server serves: %s", f)
	}
	assert.Equal(t, "/readyz", str(c, "readinessProbe", "httpGet", "path"))
	assert.Equal(t, "/healthz", str(c, "livenessProbe", "httpGet", "path"))
	ports := map[string]int{}
	for _, p := range list(c, "ports") {
		ports[str(p, "name")] = intAt(p, "containerPort")
	}
	for _, p := range []any{get(c, "readinessProbe", "httpGet", "port"), get(c, "livenessProbe", "httpGet", "port")} {
		assert.Equal(t, "http", p, "the probes ask the MCP listener")
	}
	assert.True(t, strings.HasSuffix(flagValue(args, "--http"), ":"+strconv.Itoa(ports["http"])), "--http on the http port")
	assert.True(t, strings.HasSuffix(flagValue(args, "--metrics"), ":"+strconv.Itoa(ports["metrics"])), "--metrics on the metrics port")
	assert.Equal(t, strconv.Itoa(ports["metrics"]), str(sts, "spec", "template", "metadata", "annotations", "prometheus.io/port"))

	mounts := map[string]string{}
	for _, m := range list(c, "volumeMounts") {
		mounts[str(m, "mountPath")] = str(m, "name")
	}
	claims := map[string]bool{}
	for _, v := range list(sts, "spec", "volumeClaimTemplates") {
		claims[str(v, "metadata", "name")] = true
	}
	ws, state := flagValue(args, "--workspace"), flagValue(args, "--state-dir")
	assert.True(t, claims[mounts[ws]], "the workspace %s on a volume claim", ws)
	assert.True(t, claims[mounts[state]], "the state %s on a volume claim", state)
	assert.False(t, strings.HasPrefix(state+"/", ws+"/") || strings.HasPrefix(ws+"/", state+"/"),
		"Landlock refuses a state directory inside the workspace")
	assert.NotEmpty(t, mounts["/tmp"], "a writable /tmp on a read-only root")

	// Drain: the grace period covers the preStop pause and the drain.
	cfgMount := filepath.Dir(flagValue(args, "--config"))
	var cmName string
	for _, v := range list(pod, "volumes") {
		if str(v, "name") == mounts[cfgMount] {
			cmName = str(v, "configMap", "name")
		}
	}
	cm := find(objs, "ConfigMap", cmName)
	require.NotNil(t, cm, "the ConfigMap %q behind --config", cmName)
	config := str(cm, "data", filepath.Base(flagValue(args, "--config")))
	drain := drainTimeout(t, config)
	grace := time.Duration(intAt(pod, "terminationGracePeriodSeconds")) * time.Second
	preStop := time.Duration(intAt(c, "lifecycle", "preStop", "sleep", "seconds")) * time.Second
	assert.Greater(t, grace, preStop+drain, "terminationGracePeriodSeconds must exceed preStop + http.drain_timeout")

	// The Services and the budget select these pods; the headless one
	// names them.
	labels, _ := get(sts, "spec", "template", "metadata", "labels").(map[string]any)
	selects := func(sel any) bool {
		m, _ := sel.(map[string]any)
		if len(m) == 0 {
			return false
		}
		for k, v := range m {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	headless := find(objs, "Service", str(sts, "spec", "serviceName"))
	require.NotNil(t, headless, "the StatefulSet's headless Service")
	assert.Equal(t, "None", str(headless, "spec", "clusterIP"))
	var services int
	for _, o := range objs {
		if str(o, "kind") == "Service" && selects(get(o, "spec", "selector")) {
			services++
		}
	}
	assert.GreaterOrEqual(t, services, 2, "a headless Service and a Service")
	pdb := find(objs, "PodDisruptionBudget", "")
	require.NotNil(t, pdb)
	assert.True(t, selects(get(pdb, "spec", "selector", "matchLabels")))
	np := find(objs, "NetworkPolicy", "")
	require.NotNil(t, np)
	assert.True(t, selects(get(np, "spec", "podSelector", "matchLabels")))
	assert.ElementsMatch(t, []any{"Ingress", "Egress"}, list(np, "spec", "policyTypes"))
	egress, _ := json.Marshal(get(np, "spec", "egress"))
	assert.Contains(t, string(egress), "169.254.0.0/16", "no way to the cloud's metadata service")

	runKit(t, sts, config)
}

// drainTimeout is http.drain_timeout as the real cordon reads config.
func drainTimeout(t *testing.T, config string) time.Duration {
	t.Helper()
	f := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(f, []byte(config), 0o644))
	cmd := exec.Command(cordonBin(), "status", "--json", "--config", f)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	require.NoError(t, err, "cordon status with the deployment's config")
	var st struct {
		Config struct {
			Settings map[string]struct {
				Value  any `json:"value"`
				Origin struct {
					Source string `json:"source"`
				} `json:"origin"`
			} `json:"settings"`
		} `json:"config"`
	}
	require.NoError(t, json.Unmarshal(out, &st))
	s := st.Config.Settings["http.drain_timeout"]
	require.Equal(t, "config", s.Origin.Source, "the deployment sets http.drain_timeout itself")
	d, err := time.ParseDuration(fmt.Sprint(s.Value))
	require.NoError(t, err)
	return d
}

// runKit runs, on this machine, what the pod runs: the init container's
// copy of the principals, the server with the StatefulSet's arguments,
// its probes against the real endpoints, and the startup probe's command;
// the pod's paths become temporary directories.
func runKit(t *testing.T, sts obj, config string) {
	t.Helper()
	pod := get(sts, "spec", "template", "spec")
	c := list(pod, "containers")[0]
	args := list(c, "args")
	root := t.TempDir()
	paths := map[string]string{}
	for _, p := range []string{flagValue(args, "--workspace"), flagValue(args, "--state-dir"), filepath.Dir(flagValue(args, "--config"))} {
		paths[p] = filepath.Join(root, strings.ReplaceAll(strings.Trim(p, "/"), "/", "-"))
		require.NoError(t, os.MkdirAll(paths[p], 0o700))
	}
	secretDir := filepath.Join(root, "secret")
	require.NoError(t, os.MkdirAll(secretDir, 0o755))
	paths["/etc/cordon/secret"] = secretDir
	// The longest pod path first: /etc/cordon/secret before /etc/cordon.
	var podPaths []string
	for p := range paths {
		podPaths = append(podPaths, p)
	}
	slices.SortFunc(podPaths, func(a, b string) int { return len(b) - len(a) })
	local := func(s string) string {
		for _, p := range podPaths {
			s = strings.ReplaceAll(s, p, paths[p])
		}
		return s
	}
	require.NoError(t, os.WriteFile(local(flagValue(args, "--config")), []byte(local(config)), 0o644))

	// The Secret's file as the kubelet leaves it (group-readable):
	// cordon refuses it, and accepts the init container's copy.
	secretTokens := filepath.Join(secretDir, "http-tokens")
	require.NoError(t, os.WriteFile(secretTokens, []byte("alice sha256:"+digest("alice's token, long enough")+"\n"), 0o440))
	require.NoError(t, os.Chmod(secretTokens, 0o440))
	// `cordon token list` reads <state-dir>/http-tokens, as the server
	// reads [http] tokens.
	listTokens := func(file string) (string, error) {
		require.Equal(t, "http-tokens", filepath.Base(file))
		out, err := exec.Command(cordonBin(), "token", "list", "--state-dir", filepath.Dir(file)).CombinedOutput()
		return string(out), err
	}
	if out, err := listTokens(secretTokens); err == nil {
		t.Logf("cordon now reads a group-readable token file (%s): the init container may be unneeded", out)
	}
	inits := list(pod, "initContainers")
	require.Len(t, inits, 1, "the init container that copies the principals")
	script := list(inits[0], "command")
	require.Equal(t, []any{"/bin/sh", "-c"}, script[:2])
	out, err := exec.Command("/bin/sh", "-c", local(script[2].(string))).CombinedOutput()
	require.NoError(t, err, string(out))
	copied := local(flagValue(args, "--state-dir")) + "/http-tokens"
	tokensOut, err := listTokens(copied)
	require.NoError(t, err, "cordon refuses the init container's copy: %s", tokensOut)
	assert.Contains(t, tokensOut, "alice")
	require.NoError(t, os.Remove(secretTokens))
	out, err = exec.Command("/bin/sh", "-c", local(script[2].(string))).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.NoFileExists(t, copied, "a Secret without principals leaves none behind")

	// The server, with the StatefulSet's arguments. Listeners move to
	// loopback port 0 (the addresses are read from the log).
	var serveArgs []string
	for _, a := range args {
		s := local(a.(string))
		if strings.HasPrefix(s, "0.0.0.0:") {
			s = "127.0.0.1:0"
		}
		serveArgs = append(serveArgs, strings.ReplaceAll(s, "$(POD_NAME)", str(sts, "metadata", "name")+"-0"))
	}
	cmd := exec.Command(cordonBin(), serveArgs...)
	cmd.Dir = local(flagValue(args, "--workspace"))
	cmd.Env = append(os.Environ(), "CORDON_HTTP_TOKEN="+randomToken(t))
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	addrs := make(chan [2]string, 4)
	var log syncBuffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.Write([]byte(sc.Text() + "\n"))
			var l struct{ Addr, MetricsAddr, Message string }
			var raw map[string]any
			if json.Unmarshal(sc.Bytes(), &raw) == nil {
				l.Message, _ = raw["message"].(string)
				l.Addr, _ = raw["addr"].(string)
				l.MetricsAddr, _ = raw["metrics_addr"].(string)
			}
			switch {
			case strings.Contains(l.Message, "serving MCP over HTTP"):
				addrs <- [2]string{"http", l.Addr}
			case strings.Contains(l.Message, "Prometheus"):
				addrs <- [2]string{"metrics", l.MetricsAddr}
			}
		}
	}()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		// SIGTERM, as the kubelet sends it: a drain, then exit 0.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			assert.Equal(t, 0, cmd.ProcessState.ExitCode(), "cordon's exit after SIGTERM")
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Error("cordon did not exit within 60 s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("cordon %s:\n%s", strings.Join(serveArgs, " "), log.String())
		}
	}()
	listen := map[string]string{}
	deadline := time.After(60 * time.Second)
	for len(listen) < 2 {
		select {
		case a := <-addrs:
			listen[a[0]] = a[1]
		case <-exited:
			t.Fatalf("cordon serve exited at start:\n%s", log.String())
		case <-deadline:
			t.Fatalf("cordon serve did not start both listeners within 60 s:\n%s", log.String())
		}
	}
	getStatus := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		url := "http://" + listen[str(c, probe, "httpGet", "port")] + str(c, probe, "httpGet", "path")
		waitFor(t, probe+" "+url, func() bool { return getStatus(url) == http.StatusOK })
	}
	annotations := get(sts, "spec", "template", "metadata", "annotations")
	metricsURL := "http://" + listen["metrics"] + str(annotations, "prometheus.io/path")
	assert.Equal(t, http.StatusOK, getStatus(metricsURL), "the scrape annotations name cordon's metrics")

	// The startup probe's command, beside the running server, as the
	// kubelet runs it.
	probe := list(c, "startupProbe", "exec", "command")
	var probeArgs []string
	for _, a := range probe[1:] {
		probeArgs = append(probeArgs, local(a.(string)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	pc := exec.CommandContext(ctx, cordonBin(), probeArgs...)
	pc.Dir = local(flagValue(args, "--workspace"))
	out, err = pc.CombinedOutput()
	assert.NoError(t, err, "the startup probe (cordon %s) fails:\n%s", strings.Join(probeArgs, " "), out)
}

// TestKubernetesManifests checks deploy/kubernetes as kustomize applies it.
func TestKubernetesManifests(t *testing.T) {
	checkKit(t, kustomizeObjects(t, "kubernetes"), "cordon")
	// The example Secret parses, and holds no working token.
	b, err := os.ReadFile("kubernetes/secret.example.yaml")
	require.NoError(t, err)
	s := decodeYAML(t, b, "secret.example.yaml")
	require.Len(t, s, 1)
	assert.Equal(t, "cordon-tokens", str(s[0], "metadata", "name"))
	sc := bufio.NewScanner(strings.NewReader(str(s[0], "stringData", "http-tokens")))
	for sc.Scan() {
		assert.Regexp(t, `^[a-z]+ sha256:0{63}[01]$`, sc.Text(), "placeholder digests only")
	}
}

// TestKubectlKustomize renders deploy/kubernetes with kubectl's own
// kustomize, where kubectl is installed, and checks that rendering.
func TestKubectlKustomize(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	out, err := exec.Command(kubectl, "kustomize", "kubernetes").Output()
	require.NoError(t, err)
	objs := decodeYAML(t, out, "kubectl kustomize")
	// The generated ConfigMap's name carries a hash; the StatefulSet's
	// reference is rewritten to it.
	checkKit(t, objs, "cordon")
}

// TestHelmChart renders the chart with its defaults and checks it like
// the manifests; then helm lint, and the values the chart must refuse.
func TestHelmChart(t *testing.T) {
	objs := helmTemplate(t)
	checkKit(t, objs, "cordon")
	require.NotNil(t, find(objs, "Deployment", "cordon-gateway"), "the gateway")

	lint := exec.Command(helm(t), "lint", "--strict", "./helm/cordon")
	out, err := lint.CombinedOutput()
	assert.NoError(t, err, "helm lint:\n%s", out)

	for _, tc := range []struct {
		name string
		set  []string
		says string
	}{
		{"grace shorter than the drain", []string{"--set", "server.terminationGracePeriodSeconds=30"}, "must exceed"},
		{"a principal given by its token", []string{"--set", "auth.principals[0].name=alice", "--set", "auth.principals[0].sha256=not-a-digest"}, "sha256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(helm(t), append([]string{"template", "cordon", "./helm/cordon"}, tc.set...)...)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "helm rendered it:\n%s", out)
			assert.Contains(t, string(out), tc.says)
		})
	}
}

// TestGatewayManifests checks deploy/gateway as kustomize applies it: the
// gateway pod is restricted, admitted by cordon's NetworkPolicy, and has
// an address for every server haproxy.cfg names, each the StatefulSet's
// pod of that name.
func TestGatewayManifests(t *testing.T) {
	kit := kustomizeObjects(t, "kubernetes")
	gw := kustomizeObjects(t, "gateway")
	sts := find(kit, "StatefulSet", "cordon")
	dep := find(gw, "Deployment", "cordon-gateway")
	require.NotNil(t, dep)
	pod := get(dep, "spec", "template", "spec")
	checkRestricted(t, "the gateway", pod)

	np := find(kit, "NetworkPolicy", "")
	admitted := false
	labels, _ := get(dep, "spec", "template", "metadata", "labels").(map[string]any)
	for _, rule := range list(np, "spec", "ingress") {
		for _, from := range list(rule, "from") {
			sel, ok := get(from, "podSelector", "matchLabels").(map[string]any)
			if !ok || get(from, "namespaceSelector") != nil {
				continue
			}
			all := true
			for k, v := range sel {
				all = all && labels[k] == v
			}
			admitted = admitted || all
		}
	}
	assert.True(t, admitted, "cordon's NetworkPolicy admits the gateway's pods")

	cm := find(gw, "ConfigMap", "cordon-gateway")
	require.NotNil(t, cm)
	cfg := str(cm, "data", "haproxy.cfg")
	env := map[string]string{}
	for _, e := range list(pod, "containers", 0, "env") {
		env[str(e, "name")] = str(e, "value")
	}
	servers := regexp.MustCompile(`(?m)^\s*server (\S+) "\$\{(CORDON_\d+)\}"`).FindAllStringSubmatch(cfg, -1)
	require.NotEmpty(t, servers)
	headless := str(sts, "spec", "serviceName") + "." + str(sts, "metadata", "namespace") + ".svc.cluster.local"
	port := flagValue(list(sts, "spec", "template", "spec", "containers", 0, "args"), "--http")
	_, port, _ = strings.Cut(port, ":")
	names := map[string]bool{}
	for _, m := range servers {
		names[m[1]] = true
		assert.Equal(t, m[1]+"."+headless+":"+port, env[m[2]], "server %s is the pod of that name", m[1])
		assert.Contains(t, cfg, "backend replica-"+m[1]+"\n", "a backend for the sessions of %s", m[1])
	}
	assert.Len(t, names, intAt(sts, "spec", "replicas"), "a server per replica")
	mapPath := env["CORDON_PRINCIPALS_MAP"]
	mount := str(pod, "containers", 0, "volumeMounts", 0, "mountPath")
	assert.Equal(t, mount, filepath.Dir(mapPath))
	assert.NotNil(t, get(cm, "data", filepath.Base(mapPath)), "the principals map in the ConfigMap")
}

// haproxyDirectives are a configuration's lines without comments, blank
// lines or indentation.
func haproxyDirectives(cfg string) []string {
	var out []string
	for _, l := range strings.Split(cfg, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestHelmGateway: the chart's gateway, rendered for the two replicas of
// deploy/gateway/haproxy.cfg, is that configuration (which
// TestGatewayHAProxy drives), and its pods get the same addresses as the
// manifests' gateway.
func TestHelmGateway(t *testing.T) {
	objs := helmTemplate(t, "--set", "replicaCount=2",
		"--set", "auth.principals[0].name=alice", "--set", "auth.principals[0].sha256="+digest("alice's token"),
		"--set", "auth.principals[0].replica=1")
	cm := find(objs, "ConfigMap", "cordon-gateway")
	require.NotNil(t, cm)
	want, err := os.ReadFile("gateway/haproxy.cfg")
	require.NoError(t, err)
	assert.Equal(t, haproxyDirectives(string(want)), haproxyDirectives(str(cm, "data", "haproxy.cfg")))
	assert.Equal(t, digest("alice's token")+" cordon-1", strings.TrimSpace(str(cm, "data", "principals.map")))
	secret := find(objs, "Secret", "cordon-tokens")
	require.NotNil(t, secret)
	tokens, err := base64.StdEncoding.DecodeString(str(secret, "data", "http-tokens"))
	require.NoError(t, err)
	assert.Equal(t, "alice sha256:"+digest("alice's token")+"\n", string(tokens))

	envOf := func(objs []obj) map[string]string {
		env := map[string]string{}
		for _, e := range list(find(objs, "Deployment", "cordon-gateway"), "spec", "template", "spec", "containers", 0, "env") {
			env[str(e, "name")] = str(e, "value")
		}
		return env
	}
	assert.Equal(t, envOf(kustomizeObjects(t, "gateway")), envOf(objs))
}
