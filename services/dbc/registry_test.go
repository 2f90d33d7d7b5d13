package dbc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestRegistryLoadPaths(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "data")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join("testdata", "handmade.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "car.dbc"), filepath.Join(dir, "sub", "truck.dbc"), filepath.Join(root, "outside.dbc")} {
		if err := os.WriteFile(p, good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "outside.dbc"), filepath.Join(dir, "escape.dbc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("car.dbc", filepath.Join(dir, "alias.dbc")); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(dir)
	tests := []struct {
		name, file, as string
		wantName       string
		wantErr        error
		errText        string
	}{
		{name: "plain", file: "car.dbc", wantName: "car"},
		{name: "subdirectory, named", file: "sub/truck.dbc", as: "truck-2", wantName: "truck-2"},
		{name: "symlink inside", file: "alias.dbc", wantName: "alias"},
		{name: "dot dot", file: "../outside.dbc", wantErr: ErrUnsafePath},
		{name: "absolute", file: filepath.Join(root, "outside.dbc"), wantErr: ErrUnsafePath},
		{name: "hidden dot dot", file: "sub/../../outside.dbc", wantErr: ErrUnsafePath},
		{name: "symlink out", file: "escape.dbc", errText: "escapes"},
		{name: "directory", file: "sub", wantErr: ErrNotRegular},
		{name: "missing", file: "nope.dbc", wantErr: os.ErrNotExist},
		{name: "bad name", file: "car.dbc", as: "a b", wantErr: ErrBadName},
		{name: "empty", file: "", wantErr: ErrUnsafePath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := r.Load(context.Background(), tc.as, tc.file)
			switch {
			case tc.wantErr != nil || tc.errText != "":
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("err = %v, want %v %q", err, tc.wantErr, tc.errText)
				}
			case err != nil:
				t.Fatal(err)
			case db.Name != tc.wantName:
				t.Errorf("name = %q, want %q", db.Name, tc.wantName)
			}
		})
	}
	if got, err := r.Get("car"); err != nil || got.File != "car.dbc" {
		t.Errorf("Get = %v, %v", got, err)
	}
	if _, err := r.Get("nope"); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("Get(nope) = %v", err)
	}
}

func TestRegistryBounded(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile(filepath.Join("testdata", "handmade.dbc"))
	os.WriteFile(filepath.Join(dir, "a.dbc"), good, 0o644)
	r := NewRegistry(dir)
	for i := range MaxDatabases {
		if _, err := r.Load(context.Background(), "db"+strconv.Itoa(i), "a.dbc"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Load(context.Background(), "one-more", "a.dbc"); !errors.Is(err, ErrTooMany) {
		t.Fatalf("err = %v, want ErrTooMany", err)
	}
	if _, err := r.Load(context.Background(), "db0", "a.dbc"); err != nil {
		t.Errorf("replacing a loaded name must work: %v", err)
	}
	if n := len(r.List()); n != MaxDatabases {
		t.Errorf("%d loaded", n)
	}
	if _, err := NewRegistry("").Load(context.Background(), "", "a.dbc"); !errors.Is(err, ErrNoDataDir) {
		t.Errorf("no dir: %v", err)
	}
}

func TestRegistryRefusesProse(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join("testdata", "prose.dbc"))
	os.WriteFile(filepath.Join(dir, "letter.dbc"), b, 0o644)
	_, err := NewRegistry(dir).Load(context.Background(), "", "letter.dbc")
	var e *Error
	if !errors.As(err, &e) || e.File != "letter.dbc" || e.Line == 0 {
		t.Fatalf("err = %v, want a located *Error", err)
	}
}

func TestRegistryWatch(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.dbc", "b.dbc"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("BO_ 1 M: 8 N\n SG_ S : 0|8@1+ (1,0) [0|0] \"\" N\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := NewRegistry(dir)
	var seen [][]string
	r.Watch(func(all []*Database) {
		var names []string
		for _, db := range all {
			names = append(names, db.Name)
		}
		seen = append(seen, names)
	})
	r.Load(context.Background(), "", "a.dbc")
	r.Load(context.Background(), "", "missing.dbc")
	r.Load(context.Background(), "", "b.dbc")
	r.Load(context.Background(), "", "a.dbc")
	if fmt.Sprint(seen) != "[[a] [a b] [a b]]" {
		t.Errorf("watcher saw %v", seen)
	}
}
