// Package sipcompare compares the SIP and RTP figures of two sides (two
// windows of the live store, two ports, two opened captures) and ranks
// them by how much they moved, before and after.
//
// Every figure comes from the existing aggregates: dialog counts by
// dimension from sip.Aggregate, ASR, NER, ACD and PDD from
// sip.MetricsAcc, MOS bands from rtp.SatisfactionBands. What this package
// adds is the pairing, the change and the population guard: a figure
// whose population on either side is below the minimum is reported but
// not ranked, so a window of one call cannot top the list.
package sipcompare
