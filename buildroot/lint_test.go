package buildroot

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fieldtap/board"
	"fieldtap/firmware/config"
)

const (
	// buildrootGo is the Go that Buildroot 2026.08 builds fieldtap with
	// (GOTOOLCHAIN=local): go.mod may not ask for more.
	buildrootGo = "1.26.6"
	prefix      = "FIELDTAP"
)

var (
	assignRe = regexp.MustCompile(`^([A-Za-z0-9_]+)\s*(?:\+=|:=|\?=|=)`)
	defineRe = regexp.MustCompile(`^define\s+([A-Za-z0-9_]+)`)
	sourceRe = regexp.MustCompile(`^\s*source\s+"\$BR2_EXTERNAL_` + prefix + `_PATH/(.+)"`)
	configRe = regexp.MustCompile(`^\s*(?:menu)?config\s+(\S+)`)
	extRefRe = regexp.MustCompile(`\$\(BR2_EXTERNAL_` + prefix + `_PATH\)/(\S+?)[\s"]`)
)

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExternalDesc(t *testing.T) {
	d := read(t, "external.desc")
	if !strings.Contains(d, "name: "+prefix+"\n") || !strings.Contains(d, "desc: ") {
		t.Errorf("external.desc: want name: %s and a desc line, got %q", prefix, d)
	}
	if mk := read(t, "external.mk"); !strings.Contains(mk, "$(BR2_EXTERNAL_"+prefix+"_PATH)/package/*/*.mk") {
		t.Errorf("external.mk does not include every package's .mk: %q", mk)
	}
}

// Every package directory is sourced from the top Config.in, and every
// source line names a file that exists.
func TestEveryPackageSourced(t *testing.T) {
	sourced := map[string]bool{}
	for _, l := range lines(t, "Config.in") {
		if m := sourceRe.FindStringSubmatch(l); m != nil {
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("Config.in sources missing %s", m[1])
			}
			sourced[m[1]] = true
		}
	}
	pkgs, _ := filepath.Glob("package/*")
	if len(pkgs) == 0 {
		t.Fatal("no packages")
	}
	for _, p := range pkgs {
		if !sourced[p+"/Config.in"] {
			t.Errorf("%s/Config.in is not sourced from Config.in", p)
		}
	}
}

// Package variables and defines carry the package's prefix, symbols the
// BR2_PACKAGE_ one, and _INSTALL_BINS (an error since Buildroot 2025.11)
// appears nowhere.
func TestPackagePrefixes(t *testing.T) {
	mks, _ := filepath.Glob("package/*/*.mk")
	for _, mk := range mks {
		pkg := strings.ToUpper(strings.ReplaceAll(filepath.Base(filepath.Dir(mk)), "-", "_"))
		for i, l := range lines(t, mk) {
			name := ""
			if m := assignRe.FindStringSubmatch(l); m != nil {
				name = m[1]
			} else if m := defineRe.FindStringSubmatch(l); m != nil {
				name = m[1]
			}
			if name != "" && !strings.HasPrefix(name, pkg+"_") {
				t.Errorf("%s:%d: %s lacks the %s_ prefix", mk, i+1, name, pkg)
			}
			if strings.Contains(l, "_INSTALL_BINS") {
				t.Errorf("%s:%d: _INSTALL_BINS is an error since Buildroot 2025.11", mk, i+1)
			}
		}
		for i, l := range lines(t, filepath.Join(filepath.Dir(mk), "Config.in")) {
			if m := configRe.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], "BR2_PACKAGE_"+pkg) {
				t.Errorf("%s/Config.in:%d: symbol %s lacks BR2_PACKAGE_%s", filepath.Dir(mk), i+1, m[1], pkg)
			}
		}
	}
}

// The golang-package settings point at this module's real commands, and a
// post-rsync hook vendors modules for the offline build.
func TestGolangPackage(t *testing.T) {
	mk := read(t, "package/fieldtap/fieldtap.mk")
	module := ""
	for _, l := range lines(t, "../go.mod") {
		if m, ok := strings.CutPrefix(l, "module "); ok {
			module = strings.TrimSpace(m)
		}
	}
	vars := map[string]string{}
	for _, l := range strings.Split(mk, "\n") {
		if k, v, ok := strings.Cut(l, " = "); ok {
			vars[k] = strings.TrimSpace(v)
		}
	}
	if vars["FIELDTAP_GOMOD"] != module {
		t.Errorf("FIELDTAP_GOMOD = %q, go.mod says module %q", vars["FIELDTAP_GOMOD"], module)
	}
	targets := strings.Fields(vars["FIELDTAP_BUILD_TARGETS"])
	if !slices.Contains(targets, "firmware/cmd/fieldtapd") {
		t.Errorf("FIELDTAP_BUILD_TARGETS %v lacks firmware/cmd/fieldtapd", targets)
	}
	for _, tg := range targets {
		if !strings.Contains(read(t, filepath.Join("..", tg, "main.go")), "package main") {
			t.Errorf("build target %s is not a main package", tg)
		}
	}
	for _, want := range []string{"$(eval $(golang-package))", "FIELDTAP_LDFLAGS", "FIELDTAP_POST_RSYNC_HOOKS += FIELDTAP_GO_MOD_VENDOR", "mod vendor", "CGO_ENABLED=0"} {
		if !strings.Contains(mk, want) {
			t.Errorf("fieldtap.mk lacks %q", want)
		}
	}
}

// go.mod must not ask for a newer Go than Buildroot builds with.
func TestGoLineWithinBuildroot(t *testing.T) {
	for _, l := range lines(t, "../go.mod") {
		v, ok := strings.CutPrefix(l, "go ")
		if !ok {
			continue
		}
		if cmpVersion(strings.TrimSpace(v), buildrootGo) > 0 {
			t.Errorf("go.mod says go %s; Buildroot's Go is %s", v, buildrootGo)
		}
		return
	}
	t.Error("go.mod has no go line")
}

func cmpVersion(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

func TestCmpVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		sign int
	}{{"1.26.0", "1.26.6", -1}, {"1.26", "1.26.6", -1}, {"1.26.6", "1.26.6", 0}, {"1.27", "1.26.6", 1}, {"1.26.10", "1.26.6", 1}} {
		if got := cmpVersion(tc.a, tc.b); (got > 0) != (tc.sign > 0) || (got < 0) != (tc.sign < 0) {
			t.Errorf("cmpVersion(%s, %s) = %d", tc.a, tc.b, got)
		}
	}
}

// Each defconfig enables fieldtap with a real board profile, and every
// file it names in this tree exists.
func TestDefconfigs(t *testing.T) {
	want := []string{"fieldtap_beaglebone_defconfig", "fieldtap_qemu_aarch64_virt_defconfig", "fieldtap_raspberrypicm4io_64_defconfig"}
	for _, name := range want {
		t.Run(name, func(t *testing.T) {
			d := read(t, filepath.Join("configs", name))
			if !strings.Contains(d, "BR2_PACKAGE_FIELDTAP=y\n") {
				t.Error("fieldtap is not enabled")
			}
			m := regexp.MustCompile(`BR2_PACKAGE_FIELDTAP_BOARD="([^"]+)"`).FindStringSubmatch(d)
			if m == nil || !slices.Contains(board.Names(), m[1]) {
				t.Errorf("BR2_PACKAGE_FIELDTAP_BOARD %v: want one of %v", m, board.Names())
			}
			if !strings.Contains(d, "BR2_LINUX_KERNEL_CONFIG_FRAGMENT_FILES=") || !strings.Contains(d, "board/fieldtap/linux.fragment") {
				t.Error("the kernel fragment is not applied")
			}
			for _, ref := range extRefRe.FindAllStringSubmatch(d, -1) {
				if _, err := os.Stat(ref[1]); err != nil {
					t.Errorf("names %s, which is not in the tree", ref[1])
				}
			}
		})
	}
}

// The kernel fragments turn on what fieldtap needs: CAN, raw sockets, the
// board's CAN controller, the NCM gadget and the GPIO character device.
func TestKernelFragments(t *testing.T) {
	common := read(t, "board/fieldtap/linux.fragment")
	for _, opt := range []string{"CONFIG_CAN=y", "CONFIG_CAN_RAW=y", "CONFIG_PACKET=y", "CONFIG_USB_CONFIGFS_NCM=y", "CONFIG_USB_CONFIGFS_ECM=y", "CONFIG_GPIO_CDEV=y"} {
		if !strings.Contains(common, opt+"\n") {
			t.Errorf("board/fieldtap/linux.fragment lacks %s", opt)
		}
	}
	for b, ctrl := range map[string]string{"qemu-virt": "CONFIG_CAN_KVASER_PCI", "rpi-cm4": "CONFIG_CAN_MCP251X", "beaglebone": "CONFIG_CAN_C_CAN_PLATFORM"} {
		if !strings.Contains(read(t, filepath.Join("board", b, "linux.fragment")), ctrl+"=") {
			t.Errorf("board/%s/linux.fragment lacks its CAN controller %s", b, ctrl)
		}
	}
	for _, f := range []string{"board/fieldtap/linux.fragment", "board/qemu-virt/linux.fragment", "board/rpi-cm4/linux.fragment", "board/beaglebone/linux.fragment"} {
		for i, l := range lines(t, f) {
			if l != "" && !strings.HasPrefix(l, "#") && !regexp.MustCompile(`^CONFIG_[A-Z0-9_]+=(y|m|n|".*"|[0-9]+)$`).MatchString(l) {
				t.Errorf("%s:%d: not a Kconfig line: %q", f, i+1, l)
			}
		}
	}
}

// The init script is busybox-style and the unit grants only the two
// capabilities to user fieldtap.
func TestServiceFiles(t *testing.T) {
	init := "package/fieldtap/S90fieldtapd"
	if fi, err := os.Stat(init); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("%s: not executable (%v)", init, err)
	}
	s := read(t, init)
	for _, want := range []string{"#!/bin/sh", `DAEMON="fieldtapd"`, "start-stop-daemon -S", "start-stop-daemon -K", "start|stop|restart)", "--user fieldtap", `"$0" respawn`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %q", init, want)
		}
	}
	u := read(t, "package/fieldtap/fieldtapd.service")
	// Restart=always with no delay: a daemon killed mid-plan comes back at
	// once and puts every CAN port back in listen-only first.
	for _, want := range []string{"User=fieldtap\n", "AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN\n", "CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN\n", "NoNewPrivileges=yes\n", "--prepare-only",
		"\nRestart=always\n", "\nRestartSec=0\n", "\nStartLimitBurst="} {
		if !strings.Contains(u, want) {
			t.Errorf("fieldtapd.service lacks %q", want)
		}
	}
	mk := read(t, "package/fieldtap/fieldtap.mk")
	for _, want := range []string{"FIELDTAP_INSTALL_INIT_SYSV", "FIELDTAP_INSTALL_INIT_SYSTEMD", "FIELDTAP_USERS"} {
		if !strings.Contains(mk, want) {
			t.Errorf("fieldtap.mk lacks %s", want)
		}
	}
}

// The configuration the image ships loads and validates for every board.
func TestShippedConfig(t *testing.T) {
	tmpl := read(t, "package/fieldtap/fieldtapd.toml")
	for _, b := range board.Names() {
		p := filepath.Join(t.TempDir(), "fieldtapd.toml")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(tmpl, "@BOARD@", b)), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("board %s: %v", b, err)
		}
	}
}
