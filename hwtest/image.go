package hwtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
)

// Image is what goes into the initramfs besides the kernel.
type Image struct {
	Root     string            // extracted Debian packages: boot/, lib/modules/, bin/busybox
	Kernel   string            // ABI, e.g. 6.1.0-57-arm64
	Binaries map[string]string // name in /bin -> host path of an arm64 binary
	Init     string            // the /init script
	// Files are added as they are, by path in the image (the init script
	// of the firmware image, its /etc/default file).
	Files map[string]File
}

// InitDScript is where the firmware image's init script lives in this
// tree, and where Build puts it in the guest.
const (
	InitDScript = "../buildroot/package/fieldtap/S90fieldtapd"
	InitDPath   = "etc/init.d/S90fieldtapd"
)

// FirmwareFiles are the firmware image's own start-up files for the
// guest: S90fieldtapd (so the emulated board runs the init script and
// respawn loop a real image does) and its /etc/default/fieldtapd.
func FirmwareFiles() (map[string]File, error) {
	s90, err := os.ReadFile(InitDScript)
	if err != nil {
		return nil, err
	}
	return map[string]File{
		InitDPath:               {Mode: ModeFile | 0o755, Data: s90},
		"etc/default/fieldtapd": {Mode: ModeFile | 0o644, Data: []byte(DefaultFile)},
	}, nil
}

// FindKernel returns the single kernel version under root/lib/modules.
func FindKernel(root string) (string, error) {
	ents, err := os.ReadDir(filepath.Join(root, "lib/modules"))
	if err != nil {
		return "", err
	}
	if len(ents) != 1 {
		return "", fmt.Errorf("want one kernel under %s/lib/modules, have %d", root, len(ents))
	}
	return ents[0].Name(), nil
}

// Build writes the initramfs: busybox, the binaries, the modules in load
// order (listed in /lib/modules/order) and /init.
func (im Image) Build(out string) error {
	files := map[string]File{}
	dir := func(p string) {
		for ; p != "." && p != "/"; p = path.Dir(p) {
			files[p] = File{Mode: ModeDir | 0o755}
		}
	}
	add := func(name string, mode uint32, data []byte) {
		dir(path.Dir(name))
		files[name] = File{Mode: mode, Data: data}
	}
	for _, d := range []string{"proc", "sys", "dev", "tmp", "etc", "sbin", "usr/bin", "usr/sbin", "run", "var/run"} {
		dir(d)
	}
	bb, err := os.ReadFile(filepath.Join(im.Root, "bin/busybox"))
	if err != nil {
		return err
	}
	add("bin/busybox", ModeFile|0o755, bb)
	add("bin/sh", ModeSymlink|0o777, []byte("busybox"))
	for name, host := range im.Binaries {
		b, err := os.ReadFile(host)
		if err != nil {
			return err
		}
		add("bin/"+name, ModeFile|0o755, b)
	}
	modRoot := filepath.Join(im.Root, "lib/modules", im.Kernel)
	order, err := ModuleOrder(os.DirFS(modRoot), Modules)
	if err != nil {
		return err
	}
	var list bytes.Buffer
	for _, p := range order {
		b, err := os.ReadFile(filepath.Join(modRoot, p))
		if err != nil {
			return err
		}
		add("lib/modules/"+path.Base(p), ModeFile|0o644, b)
		fmt.Fprintln(&list, path.Base(p))
	}
	add("lib/modules/order", ModeFile|0o644, list.Bytes())
	add("etc/passwd", ModeFile|0o644, []byte("root:x:0:0:root:/:/bin/sh\nfieldtap:x:1000:1000:fieldtap:/:/bin/false\n"))
	add("etc/group", ModeFile|0o644, []byte("root:x:0:\nfieldtap:x:1000:\ngpio:x:1001:fieldtap\ndialout:x:1002:fieldtap\n"))
	sum, txSum := sha256.Sum256([]byte(Token)), sha256.Sum256([]byte(TxToken))
	add("etc/fieldtap/tokens", ModeFile|0o600, []byte("hwtest:sha256:"+hex.EncodeToString(sum[:])+"\n"+
		"hwtest-tx:sha256:"+hex.EncodeToString(txSum[:])+":read,transmit\n"))
	add("etc/fieldtap/fieldtapd.toml", ModeFile|0o644, []byte(GuestConfig))
	add("init", ModeFile|0o755, []byte(im.Init))
	for name, f := range im.Files {
		dir(path.Dir(name))
		files[name] = f
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := WriteCPIO(f, files); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
