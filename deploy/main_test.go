// Package deploy_test checks the deployment kit in this directory: the
// Kubernetes manifests, the Helm chart and the gateway configurations,
// against the real cordon binary they run.
package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binDir holds cordon and cordon-helper, built once from this checkout.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cordon-deploy-test-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	// No test may read the config of the machine it runs on.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "no-config"))
	binDir = dir
	build := exec.Command("go", "build", "-o", dir+"/", "../cmd/cordon", "../cmd/cordon-helper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic("building cordon: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func cordonBin() string { return filepath.Join(binDir, "cordon") }
