package hwtest

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Modules the emulated board loads, in the order wanted; their
// dependencies are found from each module's .modinfo and loaded first, so
// neither depmod nor modprobe is needed.
var Modules = []string{
	"virtio_pci", "virtio_net", // eth0 (MCP via user net), eth1 (SPAN)
	"can_raw", "vcan", "kvaser_pci", "slcan", // can0/can1 on one emulated bus
	"configfs", "dummy_hcd", "usb_f_ncm", "usb_f_ecm", // the USB gadget
	// The recorder's disk: ext4 on virtio-blk; ext4 asks the crypto API
	// for crc32c by name, which modprobe would load and insmod does not.
	"virtio_blk", "crc32c_generic", "ext4",
	// Remote SPAN made by the kernel: the underlay and the tunnel links.
	"dummy", "ip_gre", "ip6_gre",
}

// modName is the kernel's name for a module file: hyphens become
// underscores and the suffix goes.
func modName(path string) string {
	return strings.ReplaceAll(strings.TrimSuffix(filepath.Base(path), ".ko"), "-", "_")
}

// ModuleOrder indexes the .ko files in fsys (a lib/modules/VERSION tree)
// and returns the paths to insmod for want, dependencies first.
func ModuleOrder(fsys fs.FS, want []string) ([]string, error) {
	var paths []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".ko") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return LoadOrder(paths, func(p string) ([]string, error) { return moduleDepends(fsys, p) }, want)
}

// LoadOrder returns the module paths to insmod for want, dependencies
// first, each once. A wanted module with no file is built into the
// kernel and skipped.
func LoadOrder(files []string, depends func(path string) ([]string, error), want []string) ([]string, error) {
	paths := map[string]string{}
	for _, p := range files {
		paths[modName(p)] = p
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("module dependency cycle at %s", name)
		case 2:
			return nil
		}
		p, ok := paths[name]
		if !ok {
			state[name] = 2
			return nil // built in
		}
		state[name] = 1
		deps, err := depends(p)
		if err != nil {
			return err
		}
		for _, d := range deps {
			if err := visit(strings.ReplaceAll(d, "-", "_")); err != nil {
				return err
			}
		}
		state[name] = 2
		order = append(order, p)
		return nil
	}
	for _, w := range want {
		if err := visit(w); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// moduleDepends reads "depends=a,b" from the module's .modinfo section.
func moduleDepends(fsys fs.FS, path string) ([]string, error) {
	b, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, err
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, nil
	}
	info, err := sec.Data()
	if err != nil {
		return nil, err
	}
	return parseDepends(info), nil
}

// parseDepends finds depends= among .modinfo's NUL-separated key=value pairs.
func parseDepends(info []byte) []string {
	for _, kv := range bytes.Split(info, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("depends=")); ok && len(v) > 0 {
			return strings.Split(string(v), ",")
		}
	}
	return nil
}
