package socketcan

// Error frame layout, from include/uapi/linux/can/error.h.
const (
	// Class bits in can_id.
	errTxTimeout = 0x001 // CAN_ERR_TX_TIMEOUT
	errLostArb   = 0x002 // CAN_ERR_LOSTARB, bit in data[0]
	errCtrl      = 0x004 // CAN_ERR_CRTL, detail in data[1]
	errProt      = 0x008 // CAN_ERR_PROT, type in data[2], location in data[3]
	errTrx       = 0x010 // CAN_ERR_TRX, detail in data[4]
	errAck       = 0x020 // CAN_ERR_ACK
	errBusOff    = 0x040 // CAN_ERR_BUSOFF
	errBusError  = 0x080 // CAN_ERR_BUSERROR
	errRestarted = 0x100 // CAN_ERR_RESTARTED
	errCnt       = 0x200 // CAN_ERR_CNT: TX/RX error counters in data[6], data[7]

	// errDLC is CAN_ERR_DLC: every error frame carries 8 bytes.
	errDLC = 8
)

// Error reasons in Stats().Errors, one per class bit and detail bit set.
// An error frame may count under several.
var (
	classReasons = [...]struct {
		bit    uint32
		reason string
	}{
		{errTxTimeout, "err_tx_timeout"},
		{errLostArb, "err_lost_arbitration"},
		{errCtrl, "err_controller"},
		{errProt, "err_protocol"},
		{errTrx, "err_transceiver"},
		{errAck, "err_no_ack"},
		{errBusOff, "err_bus_off"},
		{errBusError, "err_bus_error"},
		{errRestarted, "err_restarted"},
	}
	// data[1], CAN_ERR_CRTL_*.
	ctrlReasons = [...]string{
		"err_controller_rx_overflow", "err_controller_tx_overflow",
		"err_controller_rx_warning", "err_controller_tx_warning",
		"err_controller_rx_passive", "err_controller_tx_passive",
		"err_controller_active", "",
	}
	// data[2], CAN_ERR_PROT_*.
	protReasons = [...]string{
		"err_protocol_bit", "err_protocol_form", "err_protocol_stuff",
		"err_protocol_bit0", "err_protocol_bit1", "err_protocol_overload",
		"err_protocol_active", "err_protocol_tx",
	}
)

// ReasonMalformedError counts an error frame too short to classify.
const ReasonMalformedError = "err_malformed"

// BusState is the controller's state as error frames report it.
type BusState string

// Bus states (linux/can/netlink.h enum can_state names).
const (
	StateUnknown      BusState = ""
	StateErrorActive  BusState = "error-active"
	StateErrorWarning BusState = "error-warning"
	StateErrorPassive BusState = "error-passive"
	StateBusOff       BusState = "bus-off"
)

// ErrorFrame is one classified error frame.
type ErrorFrame struct {
	Reasons []string // see classReasons; at least one
	// State is the bus state the frame reports, StateUnknown when it
	// reports none.
	State   BusState
	BusOff  bool
	Restart bool
	// TxErr and RxErr are the controller's error counters, -1 when the
	// frame does not carry them (no CAN_ERR_CNT).
	TxErr, RxErr int
}

// classifyError decodes an error frame's can_id (flags included or not) and
// data. Reasons are appended to dst[:0] so a caller can reuse the slice.
func classifyError(dst []string, id uint32, data []byte) ErrorFrame {
	e := ErrorFrame{Reasons: dst[:0], TxErr: -1, RxErr: -1}
	if len(data) < errDLC {
		e.Reasons = append(e.Reasons, ReasonMalformedError)
		return e
	}
	for _, c := range classReasons {
		if id&c.bit != 0 {
			e.Reasons = append(e.Reasons, c.reason)
		}
	}
	if id&errCtrl != 0 {
		e.Reasons = appendBits(e.Reasons, data[1], ctrlReasons[:])
		switch d := data[1]; {
		case d&0x30 != 0: // RX_PASSIVE | TX_PASSIVE
			e.State = StateErrorPassive
		case d&0x0C != 0: // RX_WARNING | TX_WARNING
			e.State = StateErrorWarning
		case d&0x40 != 0: // ACTIVE
			e.State = StateErrorActive
		}
	}
	if id&errProt != 0 {
		e.Reasons = appendBits(e.Reasons, data[2], protReasons[:])
	}
	if id&errRestarted != 0 {
		e.Restart, e.State = true, StateErrorActive
	}
	if id&errBusOff != 0 { // after restart: a frame with both is off again
		e.BusOff, e.State = true, StateBusOff
	}
	if id&errCnt != 0 {
		e.TxErr, e.RxErr = int(data[6]), int(data[7])
	}
	if len(e.Reasons) == 0 {
		e.Reasons = append(e.Reasons, "err_unclassified") // a class this kernel header does not name
	}
	return e
}

func appendBits(dst []string, b byte, names []string) []string {
	for i, n := range names {
		if b&(1<<i) != 0 && n != "" {
			dst = append(dst, n)
		}
	}
	return dst
}
