// Package pcapfile reads pcap and pcapng capture files as a capture.Source.
//
// The reader is our own rather than pcapgo's so that every error names the
// byte offset where the file went wrong, pcapng sections with several
// interfaces (each with its own link type and timestamp resolution) are
// kept apart, and a fuzz target can hold it to "never panics".
package pcapfile
