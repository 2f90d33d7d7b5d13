package sip

import "bytes"

// FrameLen finds the length of the first message in a stream (RFC 3261
// §18.3: framed by Content-Length, which is mandatory on streams; absent
// means no body). It returns 0, nil when more bytes are needed, and an
// error when the stream cannot hold a message within MaxMessage.
// Leading CRLF keep-alives are part of the returned length.
func FrameLen(b []byte) (int, error) {
	start := 0
	for start < len(b) && (b[start] == '\r' || b[start] == '\n') {
		start++
	}
	if start == len(b) {
		return 0, nil
	}
	window := b[start:]
	if len(window) > MaxMessage {
		window = window[:MaxMessage]
	}
	end, sepLen := bytes.Index(window, []byte("\r\n\r\n")), 4
	if lf := bytes.Index(window, []byte("\n\n")); lf >= 0 && (end < 0 || lf < end) {
		end, sepLen = lf, 2
	}
	if end < 0 {
		if len(b)-start >= MaxMessage {
			return 0, perr(ReasonTooLarge, start)
		}
		return 0, nil
	}
	head := window[:end]
	cl := 0
	for off := 0; off < len(head); {
		line, next, _ := nextLine(head, off)
		if next == len(head) && off < len(head) && line == nil {
			line = head[off:]
		}
		if c := bytes.IndexByte(line, ':'); c > 0 && headerID(trimWS(line[:c])) == HContentLength {
			n, ok := atoi(line[c+1:])
			if !ok {
				return 0, perr(ReasonContentLength, start+off)
			}
			cl = n
			break
		}
		off = next
	}
	total := start + end + sepLen + cl
	if total-start > MaxMessage {
		return 0, perr(ReasonTooLarge, start)
	}
	if total > len(b) {
		return 0, nil
	}
	return total, nil
}
