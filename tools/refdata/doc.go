// Package refdata is test support: it finds the shared reference data
// (captures, candump logs, DBC files and J1708 logs with their ground
// truth) that tests check fieldtap against.
//
// The data is not in this repository: several files have no licence that
// allows redistributing them (DESIGN.md §6). It lives in ../shared/testdata
// beside the module root, one folder per family (sip/, can/, j1708/), or
// wherever the environment variable FIELDTAP_TESTDATA points. When it is
// absent, Dir and File skip the calling test with a message naming the path
// they looked for, so a plain clone passes with those tests skipped.
//
// Only tests import this package; it imports the "testing" package.
package refdata
