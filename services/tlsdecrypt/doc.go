// Package tlsdecrypt reads SIP carried over TLS when the session's keys
// are known: it holds the secrets of NSS key logs (the SSLKEYLOGFILE
// format, from files or from pcapng Decryption Secrets Blocks), follows
// each connection's hellos to learn the client random, version and cipher
// suite, and decrypts the record stream of each direction in order.
//
// TLS 1.3 (TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384,
// TLS_CHACHA20_POLY1305_SHA256, with key updates) and the AEAD suites of
// TLS 1.2 (AES-GCM and ChaCha20-Poly1305) are read; CBC suites, 0-RTT
// early data and the RSA key log form are not, and a flow that needs them
// is counted as unsupported. Key material never leaves this package: no
// error, counter or log line carries a secret or a line of a key log.
package tlsdecrypt
