package transmit

import (
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
)

// UDS addressing defaults (ISO 15765-4): physical request 0x7E0, answer
// 0x7E8 for the first ECU.
const (
	DefaultUDSRequestID  = 0x7E0
	DefaultUDSResponseID = 0x7E8
	// udsAnswerWait is P2 client (50 ms ECU P2 plus margin for a busy bus
	// and a multi-frame answer at the ECU's pace).
	udsAnswerWait = 2 * time.Second
)

// UDSRequest is one UDS request over ISO-TP.
type UDSRequest struct {
	Port       string
	RequestID  uint32 // with wire.CANEFF for 29-bit
	ResponseID uint32
	Payload    []byte // the UDS request (see isotp.ReadDataByID and friends)
	Pad        bool   // pad frames to 8 bytes
}

// Spec plans the request: a single frame, or a first frame whose
// consecutive frames wait for the ECU's flow control. The flow-control
// frame this box sends when the answer is multi-frame is in the plan.
func (r UDSRequest) Spec() (Spec, error) {
	if len(r.Payload) == 0 {
		return Spec{}, fmt.Errorf("empty UDS request")
	}
	if r.RequestID == r.ResponseID {
		return Spec{}, fmt.Errorf("request and response ids are both %X", r.RequestID&^wire.CANEFF)
	}
	raw, err := isotp.Segment(r.Payload, r.Pad)
	if err != nil {
		return Spec{}, err
	}
	frames := make([]Frame, len(raw))
	for i, b := range raw {
		frames[i] = Frame{ID: r.RequestID, Data: b, OnFlowControl: i > 0}
	}
	sid := r.Payload[0]
	name := isotp.ServiceName(sid)
	if name == "" {
		name = fmt.Sprintf("service 0x%02X", sid)
	}
	sp := Spec{
		Port: r.Port, Medium: MediumCAN, Tool: "uds_request",
		Summary: fmt.Sprintf("UDS %s (% X) to %s, answer expected on %s", name, r.Payload, Frame{ID: r.RequestID}.IDHex(), Frame{ID: r.ResponseID}.IDHex()),
		Frames:  frames,
		Unknowns: []string{
			"whether an ECU listens on this request id, and whether the service is allowed in its current session",
			"how long the ECU takes: a 0x78 pending answer extends the wait to P2* (5 s)",
		},
		Expect: &Expect{Kind: ExpectUDS, RequestID: r.RequestID, ResponseID: r.ResponseID, Request: append([]byte(nil), r.Payload...),
			FlowControl: isotp.FlowControl(isotp.FlowContinue, 0, 0, r.Pad), Timeout: udsAnswerWait},
	}
	if sid == isotp.SIDSessionControl {
		sp.Preconditions = append(sp.Preconditions, "a non-default session can change how the ECU behaves until it times out (about 5 s without TesterPresent)")
	}
	return sp, nil
}
