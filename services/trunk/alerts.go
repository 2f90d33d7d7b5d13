package trunk

import "strconv"

// alertNames are the alert descriptions of RFC 8446 §6, with the
// reserved ones of earlier versions as that table names them.
var alertNames = map[uint8]string{
	0:   "close_notify",
	10:  "unexpected_message",
	20:  "bad_record_mac",
	21:  "decryption_failed_RESERVED",
	22:  "record_overflow",
	30:  "decompression_failure_RESERVED",
	40:  "handshake_failure",
	41:  "no_certificate_RESERVED",
	42:  "bad_certificate",
	43:  "unsupported_certificate",
	44:  "certificate_revoked",
	45:  "certificate_expired",
	46:  "certificate_unknown",
	47:  "illegal_parameter",
	48:  "unknown_ca",
	49:  "access_denied",
	50:  "decode_error",
	51:  "decrypt_error",
	60:  "export_restriction_RESERVED",
	70:  "protocol_version",
	71:  "insufficient_security",
	80:  "internal_error",
	86:  "inappropriate_fallback",
	90:  "user_canceled",
	100: "no_renegotiation_RESERVED",
	109: "missing_extension",
	110: "unsupported_extension",
	111: "certificate_unobtainable_RESERVED",
	112: "unrecognized_name",
	113: "bad_certificate_status_response",
	114: "bad_certificate_hash_value_RESERVED",
	115: "unknown_psk_identity",
	116: "certificate_required",
	120: "no_application_protocol",
}

// AlertName is the RFC 8446 §6 name of an alert description, or
// "unknown(N)".
func AlertName(d uint8) string {
	if n, ok := alertNames[d]; ok {
		return n
	}
	return "unknown(" + strconv.Itoa(int(d)) + ")"
}

// LevelName is an alert level's name (RFC 5246 §7.2): warning or fatal.
func LevelName(l uint8) string {
	switch l {
	case 1:
		return "warning"
	case 2:
		return "fatal"
	}
	return "unknown(" + strconv.Itoa(int(l)) + ")"
}
