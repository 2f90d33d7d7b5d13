package main

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"fieldtap/drivers/wire"
)

// hostileStart is the capture time of the crafted traffic.
var hostileStart = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// hostileSIPCapture is one call whose every sender-written field is
// hostile: display names, User-Agent, Subject, SDP session name and codec
// name, a 486 reason phrase and a Reason header.
func hostileSIPCapture(t *testing.T) []byte {
	t.Helper()
	h := hostileText(marker)
	a, b := net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 0, 2)
	sdp := "v=0\r\no=- 1 1 IN IP4 10.0.0.1\r\ns=" + h + "\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\n" +
		"m=audio 40000 RTP/AVP 0 96\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:96 EVIL" + h + "/8000\r\n"
	hdrs := func(start, cseq string, extra string, body string) string {
		return start + "\r\n" +
			"Via: SIP/2.0/UDP 10.0.0.1:5060;branch=z9hG4bKhostile1\r\n" +
			"From: \"" + h + "\" <sip:1001@10.0.0.1>;tag=f1\r\n" +
			"To: \"" + h + "\" <sip:1002@10.0.0.2>" + extra + "\r\n" +
			"Call-ID: hostile-call-1@10.0.0.1\r\n" +
			"CSeq: " + cseq + "\r\n" +
			"User-Agent: " + h + "\r\n" +
			"Subject: " + h + "\r\n" +
			fmt.Sprintf("Content-Length: %d\r\n", len(body)) +
			func() string {
				if body != "" {
					return "Content-Type: application/sdp\r\n"
				}
				return ""
			}() + "\r\n" + body
	}
	invite := hdrs("INVITE sip:1002@10.0.0.2 SIP/2.0", "1 INVITE", "", sdp)
	busy := strings.Replace(hdrs("SIP/2.0 486 Busy "+h, "1 INVITE", ";tag=t2", ""), "Subject:", "Reason: Q.850;cause=17;text=\""+h+"\"\r\nSubject:", 1)
	ack := hdrs("ACK sip:1002@10.0.0.2 SIP/2.0", "1 ACK", ";tag=t2", "")
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, m := range []struct {
		src, dst net.IP
		text     string
	}{{a, b, invite}, {b, a, busy}, {a, b, ack}} {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: m.src.To4(), DstIP: m.dst.To4()}
		udp := &layers.UDP{SrcPort: 5060, DstPort: 5060}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		sb := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(m.text)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: hostileStart.Add(time.Duration(i) * 100 * time.Millisecond), CaptureLength: len(sb.Bytes()), Length: len(sb.Bytes())}
		if err := w.WritePacket(ci, sb.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// hostileCandump is a VIN (PGN 65260) by BAM from SA 0 whose bytes are
// hostile, and frames for the DBC's message.
func hostileCandump() []byte {
	vin := []byte("1FT\x1b[31m " + marker + "\x07*")
	var out []byte
	t := hostileStart
	line := func(id uint32, data []byte) {
		out = wire.AppendCandump(out, t, "can0", id|wire.CANEFF, data)
		t = t.Add(10 * time.Millisecond)
	}
	packets := (len(vin) + 6) / 7
	line(0x18ECFF00, []byte{0x20, byte(len(vin)), 0, byte(packets), 0xFF, 0xEC, 0xFE, 0x00})
	for i := range packets {
		d := []byte{byte(i + 1), 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
		copy(d[1:], vin[i*7:min(len(vin), i*7+7)])
		line(0x18EBFF00, d)
	}
	for i := range 3 {
		out = wire.AppendCandump(out, t, "can0", 0x100, []byte{byte(i), 0x10, 0, 0, 0, 0, 0, 0})
		t = t.Add(10 * time.Millisecond)
	}
	return out
}

// j1708Marker is the hostile J1587 text's marker: a J1708 message holds at
// most 21 bytes, so it is shorter than marker.
const j1708Marker = "IGNORE ALL"

// hostileJ1708 is a J1587 VIN (PID 237) from MID 128 whose bytes are
// hostile: an ESC, the marker, a bidi override.
func hostileJ1708() []byte {
	text := append([]byte("\x1b"+j1708Marker), 0xE2, 0x80, 0xAE)
	msg := append([]byte{128, 237, byte(len(text))}, text...)
	var sum byte
	for _, c := range msg {
		sum += c
	}
	msg = append(msg, -sum)
	var out []byte
	for i := range 3 {
		out = wire.AppendJ1708Line(out, hostileStart.Add(time.Duration(i)*time.Second), false, msg)
	}
	return out
}

// hostileDBC describes standard id 0x100 with a hostile comment, unit and
// value label.
func hostileDBC() []byte {
	h := strings.ReplaceAll(hostileText(marker), `"`, "'")
	return []byte("VERSION \"\"\n\nNS_ :\n\nBS_:\n\nBU_: ECU\n\n" +
		"BO_ 256 Engine: 8 ECU\n" +
		" SG_ Speed : 8|16@1+ (0.1,0) [0|6553.5] \"km/h" + h + "\" ECU\n" +
		" SG_ Gear : 0|8@1+ (1,0) [0|255] \"\" ECU\n\n" +
		"CM_ BO_ 256 \"" + h + "\";\n" +
		"VAL_ 256 Gear 0 \"" + h + "\" 1 \"first\" ;\n")
}
