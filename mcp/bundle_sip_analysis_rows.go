package mcp

import (
	"maps"

	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/services/tlsdecrypt"
)

// The counters get_capture_report shows: the dialog store's, the TCP
// streams' and the decoder's, each a row built from the services' plain
// counters. Every value is the box's own count or vocabulary (methods,
// codes, reasons, link types), so nothing here is fenced.

// storeStatsRow is the dialog store's counters (sip.Stats).
type storeStatsRow struct {
	Messages         uint64            `json:"messages"`
	Dialogs          int               `json:"dialogs"`
	DialogsEvicted   uint64            `json:"dialogs_evicted"`
	MessagesShed     uint64            `json:"messages_shed"`
	MessagesEvicted  uint64            `json:"messages_evicted"`
	TransactionsShed uint64            `json:"transactions_shed"`
	Requests         map[string]uint64 `json:"requests"`
	Responses        map[string]uint64 `json:"responses"`
	Undecodable      map[string]uint64 `json:"undecodable"`
	Transports       map[string]uint64 `json:"transports"`
	Revision         uint64            `json:"revision"`
}

func storeStatsRowOf(s sip.Stats) storeStatsRow {
	return storeStatsRow{Messages: s.Messages, Dialogs: s.Dialogs, DialogsEvicted: s.DialogsEvicted, MessagesShed: s.MessagesShed,
		MessagesEvicted: s.MessagesEvicted, TransactionsShed: s.TransactionsShed, Requests: s.Requests, Responses: s.Responses,
		Undecodable: s.Undecodable, Transports: s.Transports, Revision: s.Revision}
}

// streamStatsRow is the TCP streams by what they carried (sip.StreamStats).
type streamStatsRow struct {
	SIP          uint64      `json:"sip"`
	WebSocket    uint64      `json:"websocket"`
	TLS          uint64      `json:"tls"`
	TLSSessions  uint64      `json:"tls_sessions"`
	TLSOnSIPS    uint64      `json:"tls_on_sips_port"`
	TLSDecrypted uint64      `json:"tls_decrypted"`
	TLSFlows     tlsFlowsRow `json:"tls_flows"`
	TLSKeys      tlsKeysRow  `json:"tls_keys"`
	Other        uint64      `json:"other"`
	Resyncs      uint64      `json:"resyncs"`
	UDPNotSIP    uint64      `json:"udp_not_sip"`
	KeepAlives   uint64      `json:"keepalives"`
	Undecodable  uint64      `json:"undecodable"`
	DecodePanics uint64      `json:"decode_panics"`
}

func streamStatsRowOf(s sip.StreamStats) streamStatsRow {
	return streamStatsRow{SIP: s.SIP, WebSocket: s.WebSocket, TLS: s.TLS, TLSSessions: s.TLSSessions, TLSOnSIPS: s.TLSOnSIPS,
		Other: s.Other, Resyncs: s.Resyncs, UDPNotSIP: s.UDPNotSIP, KeepAlives: s.KeepAlives, Undecodable: s.Undecodable,
		DecodePanics: s.DecodePanics, TLSDecrypted: s.TLSDecrypted, TLSFlows: tlsFlowsRowOf(s.TLSFlows), TLSKeys: tlsKeysRowOf(s.TLSKeys)}
}

// tlsFlowsRow is what the TLS decryptor made of each connection
// (tlsdecrypt.Stats; docs/sip.md explains each count).
type tlsFlowsRow struct {
	Flows       uint64 `json:"flows"`
	Decrypted   uint64 `json:"decrypted"`
	NoKeys      uint64 `json:"no_keys"`
	Unsupported uint64 `json:"unsupported"`
	NoHello     uint64 `json:"no_hello"`
	Failed      uint64 `json:"failed"`
	Lost        uint64 `json:"lost"`
	Evicted     uint64 `json:"evicted"`
	Overflow    uint64 `json:"overflow"`
	Records     uint64 `json:"records"`
	BadRecords  uint64 `json:"bad_records"`
}

func tlsFlowsRowOf(s tlsdecrypt.Stats) tlsFlowsRow {
	return tlsFlowsRow{Flows: s.Flows, Decrypted: s.Decrypted, NoKeys: s.NoKeys, Unsupported: s.Unsupported, NoHello: s.NoHello,
		Failed: s.Failed, Lost: s.Lost, Evicted: s.Evicted, Overflow: s.Overflow, Records: s.Records, BadRecords: s.BadRecords}
}

// tlsKeysRow is the key store's counters (tlsdecrypt.KeyStats): counts
// only, never a secret.
type tlsKeysRow struct {
	Sessions int    `json:"sessions"`
	Evicted  uint64 `json:"evicted"`
	Refused  uint64 `json:"refused"`
}

func tlsKeysRowOf(s tlsdecrypt.KeyStats) tlsKeysRow {
	return tlsKeysRow{Sessions: s.Sessions, Evicted: s.Evicted, Refused: s.Refused}
}

// decodeStatsRow is the decoder's counters (netdecode.Stats).
type decodeStatsRow struct {
	Frames   uint64            `json:"frames"`
	IPv4     uint64            `json:"ipv4"`
	IPv6     uint64            `json:"ipv6"`
	UDP      uint64            `json:"udp"`
	Skipped  map[string]uint64 `json:"skipped"`
	Frag     fragStatsRow      `json:"fragments"`
	TCP      tcpStatsRow       `json:"tcp"`
	LinkSeen map[string]uint64 `json:"link_types"`
	Tunnels  map[string]uint64 `json:"tunnels" jsonschema:"tunnel headers opened, by kind: gre, erspan_i, erspan_ii, erspan_iii, vxlan, mpls (a frame in GRE in GRE counts twice); tunnels not opened are skipped as tunnel_not_decoded"`
}

type fragStatsRow struct {
	Fragments   uint64 `json:"fragments"`
	Reassembled uint64 `json:"reassembled"`
	TimedOut    uint64 `json:"timed_out"`
	TableFull   uint64 `json:"table_full"`
	Oversize    uint64 `json:"oversize"`
	Overlapping uint64 `json:"overlapping"`
	Pending     int    `json:"pending"`
	PendingB    int    `json:"pending_bytes"`
}

type tcpStatsRow struct {
	Segments      uint64 `json:"segments"`
	Streams       uint64 `json:"streams"`
	Open          int    `json:"open"`
	Evicted       uint64 `json:"evicted"`
	IdleClosed    uint64 `json:"idle_closed"`
	Retransmitted uint64 `json:"retransmitted"`
	OutOfOrder    uint64 `json:"out_of_order"`
	Gaps          uint64 `json:"gaps"`
	BufferFull    uint64 `json:"buffer_full"`
	TagsDropped   uint64 `json:"tags_dropped,omitempty"`
}

// decodeStatsRowOf copies the counters; a map nothing was counted in is
// empty (nonNilMap).
func decodeStatsRowOf(s netdecode.Stats) decodeStatsRow {
	f, t := s.Frag, s.TCP
	return decodeStatsRow{Frames: s.Frames, IPv4: s.IPv4, IPv6: s.IPv6, UDP: s.UDP, Skipped: nonNilMap(s.Skipped),
		Frag: fragStatsRow{Fragments: f.Fragments, Reassembled: f.Reassembled, TimedOut: f.TimedOut, TableFull: f.TableFull,
			Oversize: f.Oversize, Overlapping: f.Overlapping, Pending: f.Pending, PendingB: f.PendingB},
		TCP: tcpStatsRow{Segments: t.Segments, Streams: t.Streams, Open: t.Open, Evicted: t.Evicted, IdleClosed: t.IdleClosed,
			Retransmitted: t.Retransmitted, OutOfOrder: t.OutOfOrder, Gaps: t.Gaps, BufferFull: t.BufferFull, TagsDropped: t.TagsDropped},
		LinkSeen: nonNilMap(s.LinkSeen), Tunnels: nonNilMap(s.Tunnels)}
}

// nonNilMap is a copy of m, empty rather than nil: an answer's object is
// never null where its schema says object.
func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return maps.Clone(m)
}
