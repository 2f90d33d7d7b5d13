package sipvcon

import "embed"

//go:embed testdata/vcon
var testdataFS embed.FS
