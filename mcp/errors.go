package mcp

import "fmt"

// The error vocabulary. Every failure an answer carries has one of these
// codes; server_capabilities lists them with their meaning, so an agent
// can branch on a code instead of parsing a message.
const (
	CodeInvalidArgument  = "INVALID_ARGUMENT"
	CodeStaleCursor      = "STALE_CURSOR"
	CodeInvalidFilter    = "INVALID_FILTER"
	CodeNotFound         = "NOT_FOUND"
	CodeUnavailable      = "UNAVAILABLE"
	CodeResponseTooLarge = "RESPONSE_TOO_LARGE"
	CodeForbidden        = "FORBIDDEN"
	CodeAuditFailed      = "AUDIT_FAILED"
	CodeDBCRefused       = "DBC_REFUSED"
	CodeUploadRefused    = "UPLOAD_REFUSED"
	CodeTransmitRefused  = "TRANSMIT_REFUSED"
	CodePlanInvalid      = "PLAN_INVALID"
	CodeInternal         = "INTERNAL"
)

// ErrorCode is one code of the vocabulary with what it means.
type ErrorCode struct {
	Code    string `json:"code"`
	Meaning string `json:"meaning"`
}

// ErrorCodes is the whole vocabulary, in the order an agent should read it.
var ErrorCodes = []ErrorCode{
	{CodeInvalidArgument, "an argument is missing, of the wrong type, out of range or unknown; the message names it and what is accepted"},
	{CodeStaleCursor, "the cursor was not issued by this tool in this capture run; start again without one"},
	{CodeInvalidFilter, "the filter expression does not parse; the hint points at the column"},
	{CodeNotFound, "the thing named (a Call-ID, a stream, a plan, a port's item) is not in the store; it may have been evicted"},
	{CodeUnavailable, "the box has no store or port of the kind this tool reads (no SPAN, CAN or J1708 port)"},
	{CodeResponseTooLarge, "the answer would exceed the response budget; size_bytes, max_bytes and the hint give a call that fits"},
	{CodeForbidden, "the caller's token lacks the scope this tool needs"},
	{CodeAuditFailed, "the audit record of the call could not be written, so its answer is withheld"},
	{CodeDBCRefused, "the DBC file was refused; the message gives file:line and the reason"},
	{CodeUploadRefused, "an upload was refused (name, quota, offset, digest or content); the message names which and the box's value"},
	{CodeTransmitRefused, "a transmit gate refused; the message names the gate"},
	{CodePlanInvalid, "the transmit plan cannot be built from these arguments"},
	{CodeInternal, "the tool failed in a way it did not expect; report it"},
}

// toolError is a failure with a code of the vocabulary. Tools return it
// (wrapped or not) and the adapter renders it; any other error is INTERNAL.
type toolError struct{ info ErrorInfo }

func (e *toolError) Error() string { return e.info.Code + ": " + e.info.Message }

// failErr is a failure with a code, a message and what to do about it.
func failErr(code, msg, hint string) error {
	return &toolError{ErrorInfo{Code: code, Message: msg, Hint: hint}}
}

// argErr is INVALID_ARGUMENT for one argument: the message starts with
// its name so the agent knows which one to change.
func argErr(arg, hint, format string, a ...any) error {
	return failErr(CodeInvalidArgument, arg+": "+fmt.Sprintf(format, a...), hint)
}

// notFound is NOT_FOUND.
func notFound(hint, format string, a ...any) error {
	return failErr(CodeNotFound, fmt.Sprintf(format, a...), hint)
}

// unavailable is UNAVAILABLE: the box has nothing of this kind.
func unavailable(what, hint string) error {
	return failErr(CodeUnavailable, "this box has no "+what, hint)
}
