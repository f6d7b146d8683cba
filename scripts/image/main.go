// Command image builds cordon's OCI image without a Dockerfile or a
// daemon: a Debian root file system (a normalized, gzipped tar, see
// scripts/image-rootfs.sh) as the first layer, and cordon, cordon-helper
// and the non-root user it runs as as the second, written as an OCI
// layout and as a tarball `docker load` reads. Every byte comes from the
// inputs and -epoch (no clock, no host user, sorted entries, deterministic
// gzip), so two builds of one commit give the same digest.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The user cordon runs as: not root, and a uid no host account is likely
// to share.
const (
	uid     = 10001
	user    = "cordon"
	home    = "/home/cordon"
	workdir = "/workspace"
)

type options struct {
	rootfs, cordon, helper  string
	layoutDir, tarPath, tag string
	version, commit, arch   string
	epoch                   int64
}

func main() {
	var o options
	flag.StringVar(&o.rootfs, "rootfs", "", "the base root file system, a `TAR` or gzipped tar (used as the layer as it is)")
	flag.StringVar(&o.cordon, "cordon", "", "the static cordon `BINARY`")
	flag.StringVar(&o.helper, "helper", "", "the static cordon-helper `BINARY`")
	flag.StringVar(&o.layoutDir, "layout", "", "write the image as an OCI layout into `DIR` (replaced)")
	flag.StringVar(&o.tarPath, "tar", "", "write the image as a `docker load` tarball to `FILE`")
	flag.StringVar(&o.tag, "tag", "cordon:dev", "the image's `NAME` in the tarball and the layout")
	flag.StringVar(&o.version, "version", "dev", "the image's version label")
	flag.StringVar(&o.commit, "commit", "", "the image's revision label")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "the image's `ARCH`itecture")
	flag.Int64Var(&o.epoch, "epoch", 0, "every timestamp in the image, seconds since 1970 (SOURCE_DATE_EPOCH)")
	flag.Parse()
	if o.rootfs == "" || o.cordon == "" || o.helper == "" || (o.layoutDir == "" && o.tarPath == "") {
		fmt.Fprintln(os.Stderr, "usage: image -rootfs TAR -cordon BIN -helper BIN [-layout DIR] [-tar FILE] [-epoch N]")
		os.Exit(2)
	}
	digest, err := build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println(digest)
}

func build(o options) (v1.Hash, error) {
	created := v1.Time{Time: time.Unix(o.epoch, 0).UTC()}
	ref, err := name.NewTag(o.tag)
	if err != nil {
		return v1.Hash{}, err
	}
	base, err := tarball.LayerFromFile(o.rootfs, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return v1.Hash{}, err
	}
	passwd, group, err := readAccounts(o.rootfs)
	if err != nil {
		return v1.Hash{}, err
	}
	top, err := cordonLayer(o, passwd, group)
	if err != nil {
		return v1.Hash{}, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "debootstrap --variant=minbase (scripts/image-rootfs.sh)"}},
		mutate.Addendum{Layer: top, MediaType: types.OCILayer, History: v1.History{Created: created, CreatedBy: "cordon, cordon-helper and user cordon (scripts/image)"}},
	)
	if err != nil {
		return v1.Hash{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cf = cf.DeepCopy()
	cf.Created, cf.OS, cf.Architecture = created, "linux", o.arch
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", uid, uid),
		Entrypoint: []string{"/usr/local/bin/cordon"},
		Cmd:        []string{"serve", "--http", "0.0.0.0:8765", "--workspace", workdir},
		WorkingDir: workdir,
		Env: []string{
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"HOME=" + home,
		},
		ExposedPorts: map[string]struct{}{"8765/tcp": {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "cordon",
			"org.opencontainers.image.version":  o.version,
			"org.opencontainers.image.revision": o.commit,
			"org.opencontainers.image.source":   "https://github.com/cordonhq/cordon",
		},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return v1.Hash{}, err
	}
	if o.tarPath != "" {
		if err := writeTarball(o.tarPath, ref, img); err != nil {
			return v1.Hash{}, err
		}
	}
	if o.layoutDir != "" {
		if err := os.RemoveAll(o.layoutDir); err != nil {
			return v1.Hash{}, err
		}
		p, err := layout.Write(o.layoutDir, empty.Index)
		if err != nil {
			return v1.Hash{}, err
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": ref.TagStr(),
			"io.containerd.image.name":          ref.Name(),
		})); err != nil {
			return v1.Hash{}, err
		}
	}
	return img.Digest()
}

// writeTarball writes through a temporary file, so that a failed build
// leaves no half tarball for a test to load.
func writeTarball(path string, ref name.Tag, img v1.Image) error {
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, ref, img); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// readAccounts returns the base's /etc/passwd and /etc/group.
func readAccounts(rootfs string) (passwd, group []byte, err error) {
	f, err := os.Open(rootfs)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if magic, _ := r.(*bufio.Reader).Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		if r, err = gzip.NewReader(r); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", rootfs, err)
		}
	}
	tr := tar.NewReader(r)
	for passwd == nil || group == nil {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", rootfs, err)
		}
		switch filepath.Clean("/" + h.Name) {
		case "/etc/passwd":
			passwd, err = io.ReadAll(tr)
		case "/etc/group":
			group, err = io.ReadAll(tr)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if passwd == nil || group == nil {
		return nil, nil, errors.New(rootfs + ": no /etc/passwd or /etc/group: not a root file system")
	}
	return passwd, group, nil
}

// cordonLayer holds the binaries, the account files with user cordon
// added, its home and the default workspace. Parent directories the base
// already has are left out, so their owners and modes stay the base's.
func cordonLayer(o options, passwd, group []byte) (v1.Layer, error) {
	mtime := time.Unix(o.epoch, 0).UTC()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body []byte) error {
		h.ModTime, h.Format = mtime, tar.FormatPAX
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	bin := func(path string) ([]byte, error) {
		data, err := os.ReadFile(path)
		if err == nil && !bytes.HasPrefix(data, []byte("\x7fELF")) {
			err = fmt.Errorf("%s: not a Linux executable", path)
		}
		return data, err
	}
	cordon, err := bin(o.cordon)
	if err != nil {
		return nil, err
	}
	helper, err := bin(o.helper)
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(passwd), "\n"+user+":") || strings.HasPrefix(string(passwd), user+":") {
		return nil, errors.New("the base already has a user " + user)
	}
	passwd = append(ensureNewline(passwd), fmt.Sprintf("%s:x:%d:%d:cordon:%s:/bin/bash\n", user, uid, uid, home)...)
	group = append(ensureNewline(group), fmt.Sprintf("%s:x:%d:\n", user, uid)...)
	entries := []struct {
		h    tar.Header
		body []byte
	}{
		{tar.Header{Name: "etc/group", Typeflag: tar.TypeReg, Mode: 0o644}, group},
		{tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644}, passwd},
		{tar.Header{Name: strings.TrimPrefix(home, "/") + "/", Typeflag: tar.TypeDir, Mode: 0o700, Uid: uid, Gid: uid}, nil},
		{tar.Header{Name: "usr/local/bin/cordon", Typeflag: tar.TypeReg, Mode: 0o755}, cordon},
		{tar.Header{Name: "usr/local/bin/cordon-helper", Typeflag: tar.TypeReg, Mode: 0o755}, helper},
		{tar.Header{Name: strings.TrimPrefix(workdir, "/") + "/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: uid, Gid: uid}, nil},
	}
	for _, e := range entries {
		h := e.h
		if err := add(&h, e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

func ensureNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		return append(b, '\n')
	}
	return b
}
