// Package mqttpub publishes the box to an MQTT v5 broker: its state, its
// active faults retained one topic per source address, and a summary of
// every finished call. Publisher keeps the connection (Eclipse Paho's
// autopaho) with a last will, and a bounded queue while the broker is
// away: retained state is coalesced per topic, and what no longer fits is
// dropped oldest first and counted. Feeder turns store snapshots into
// messages. Topics, under the configured prefix (fieldtap/<box>):
//
//	status                          retained  {"online":true,…}; the will sets {"online":false}
//	state                           retained  arm, transmit, ports, bus load, VoIP totals
//	faults/j1939/<port>/<SA hex>    retained  active DM1 DTCs of one source; empty payload when cleared
//	faults/j1587/<MID>              retained  active PID 194 codes of one MID; empty when cleared
//	calls                           event     one summary per finished INVITE dialog
package mqttpub
