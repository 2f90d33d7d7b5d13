// Package hepin is the hep port driver: it listens for HEP3 (EEP) on UDP
// and TCP, as a HOMER collector does, and turns each accepted packet into
// a raw IP frame (an IPv4 or IPv6 header, UDP or TCP, the payload) with
// the agent's addresses, ports and capture time, so Kamailio's siptrace,
// OpenSIPS, FreeSWITCH, Asterisk, heplify or another fieldtap feed the
// same analysers as a SPAN port.
//
// What it takes: SIP (type 1), RTP (type 4) and RTCP (type 5, as raw
// RTCP or as HOMER's JSON, which is turned back into an SR or RR). What
// it refuses is counted by cause in the port's drops (Causes): malformed
// packets (wire.DecodeHEP's causes), a wrong or missing auth key, a
// capture id off the allow-list, another payload type, a packet past the
// frame cap. Nothing a sender writes ends the port.
package hepin
