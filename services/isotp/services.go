package isotp

import (
	"fmt"
	"slices"
)

// Where the names in the reference tables come from. ISO 14229-1 and ISO
// 14230-3 are not quoted: the service, sub-function, NRC and identifier
// names are the ones every public summary of the standards uses (for
// example the Wikipedia articles "Unified Diagnostic Services" and
// "Keyword Protocol 2000"), spelled as the standards spell them.
const (
	StdUDS  = "ISO 14229-1 (UDS)"
	StdKWP  = "ISO 14230-3 (KWP2000)"
	StdOBD  = "SAE J1979 / ISO 15031-5 (OBD-II)"
	stdBoth = "ISO 14229-1 (UDS) and ISO 14230-3 (KWP2000)"
)

// Named is one value of a sub-function or parameter with its name.
type Named struct {
	Value uint8
	Name  string
}

// ServiceInfo is one row of the diagnostic services reference.
type ServiceInfo struct {
	SID      uint8
	Response uint8
	Name     string
	Standard string
	// SubFunction says whether the byte after the SID is a sub-function
	// (its bit 7 then suppresses the positive response).
	SubFunction  bool
	SubFunctions []Named
	// Identifier names what the request's first parameter is ("DID",
	// "routine", "local identifier", "PID", …); "" when none is decoded.
	Identifier string
}

// idDID and friends name the identifier a request carries.
const (
	idDID     = "data identifier (2 bytes)"
	idRoutine = "routine identifier (2 bytes, after the sub-function)"
	idLocal   = "local identifier (1 byte)"
	idPID     = "parameter identifier (1 byte)"
	idAddress = "address and length format, then memory address"
	idGroup   = "group of DTC (3 bytes)"
	idReport  = "report type (the sub-function)"
)

// serviceTable is the reference: UDS services, the KWP2000 services a
// truck or an older car still answers, and the OBD-II modes. A constant
// table; ServiceName and the trace read it.
var serviceTable = [...]ServiceInfo{
	{SID: 0x01, Name: "ShowCurrentData", Standard: StdOBD, Identifier: idPID},
	{SID: 0x02, Name: "ShowFreezeFrameData", Standard: StdOBD, Identifier: idPID},
	{SID: 0x03, Name: "ShowStoredDTCs", Standard: StdOBD},
	{SID: 0x04, Name: "ClearDTCsAndStoredValues", Standard: StdOBD},
	{SID: 0x05, Name: "OxygenSensorMonitoring", Standard: StdOBD},
	{SID: 0x06, Name: "OnBoardMonitoringResults", Standard: StdOBD},
	{SID: 0x07, Name: "ShowPendingDTCs", Standard: StdOBD},
	{SID: 0x08, Name: "ControlOnBoardSystem", Standard: StdOBD},
	{SID: 0x09, Name: "RequestVehicleInformation", Standard: StdOBD, Identifier: idPID},
	{SID: 0x0A, Name: "PermanentDTCs", Standard: StdOBD},
	{SID: SIDSessionControl, Name: "DiagnosticSessionControl", Standard: stdBoth, SubFunction: true, SubFunctions: []Named{
		{1, "defaultSession"}, {2, "programmingSession"}, {3, "extendedDiagnosticSession"}, {4, "safetySystemDiagnosticSession"}}},
	{SID: 0x11, Name: "ECUReset", Standard: stdBoth, SubFunction: true, SubFunctions: []Named{
		{1, "hardReset"}, {2, "keyOffOnReset"}, {3, "softReset"}, {4, "enableRapidPowerShutDown"}, {5, "disableRapidPowerShutDown"}}},
	{SID: SIDClearDTC, Name: "ClearDiagnosticInformation", Standard: stdBoth, Identifier: idGroup},
	{SID: 0x17, Name: "ReadStatusOfDiagnosticTroubleCodes", Standard: StdKWP},
	{SID: 0x18, Name: "ReadDiagnosticTroubleCodesByStatus", Standard: StdKWP},
	{SID: SIDReadDTC, Name: "ReadDTCInformation", Standard: StdUDS, SubFunction: true, Identifier: idReport, SubFunctions: []Named{
		{DTCCountByMask, "reportNumberOfDTCByStatusMask"}, {DTCByMask, "reportDTCByStatusMask"},
		{0x03, "reportDTCSnapshotIdentification"}, {0x04, "reportDTCSnapshotRecordByDTCNumber"},
		{0x06, "reportDTCExtDataRecordByDTCNumber"}, {0x07, "reportNumberOfDTCBySeverityMaskRecord"},
		{0x08, "reportDTCBySeverityMaskRecord"}, {DTCSupported, "reportSupportedDTC"},
		{0x0B, "reportFirstTestFailedDTC"}, {0x0E, "reportMostRecentConfirmedDTC"}, {0x15, "reportDTCWithPermanentStatus"}}},
	{SID: 0x1A, Name: "ReadEcuIdentification", Standard: StdKWP, Identifier: idLocal},
	{SID: 0x21, Name: "ReadDataByLocalIdentifier", Standard: StdKWP, Identifier: idLocal},
	{SID: SIDReadDataByID, Name: "ReadDataByIdentifier", Standard: stdBoth, Identifier: idDID},
	{SID: 0x23, Name: "ReadMemoryByAddress", Standard: stdBoth, Identifier: idAddress},
	{SID: 0x24, Name: "ReadScalingDataByIdentifier", Standard: StdUDS, Identifier: idDID},
	{SID: 0x27, Name: "SecurityAccess", Standard: stdBoth, SubFunction: true, SubFunctions: []Named{
		{1, "requestSeed (level 1)"}, {2, "sendKey (level 1)"}, {3, "requestSeed (level 3)"}, {4, "sendKey (level 3)"}}},
	{SID: 0x28, Name: "CommunicationControl", Standard: StdUDS, SubFunction: true, SubFunctions: []Named{
		{0, "enableRxAndTx"}, {1, "enableRxAndDisableTx"}, {2, "disableRxAndEnableTx"}, {3, "disableRxAndTx"}}},
	{SID: 0x29, Name: "Authentication", Standard: StdUDS, SubFunction: true},
	{SID: 0x2A, Name: "ReadDataByPeriodicIdentifier", Standard: StdUDS},
	{SID: 0x2C, Name: "DynamicallyDefineDataIdentifier", Standard: StdUDS, SubFunction: true},
	{SID: 0x2E, Name: "WriteDataByIdentifier", Standard: stdBoth, Identifier: idDID},
	{SID: 0x2F, Name: "InputOutputControlByIdentifier", Standard: stdBoth, Identifier: idDID},
	{SID: 0x30, Name: "InputOutputControlByLocalIdentifier", Standard: StdKWP, Identifier: idLocal},
	{SID: SIDRoutineControl, Name: "RoutineControl", Standard: StdUDS, SubFunction: true, Identifier: idRoutine, SubFunctions: []Named{
		{1, "startRoutine"}, {2, "stopRoutine"}, {3, "requestRoutineResults"}}},
	{SID: 0x34, Name: "RequestDownload", Standard: stdBoth},
	{SID: 0x35, Name: "RequestUpload", Standard: stdBoth},
	{SID: 0x36, Name: "TransferData", Standard: stdBoth},
	{SID: 0x37, Name: "RequestTransferExit", Standard: stdBoth},
	{SID: 0x38, Name: "RequestFileTransfer", Standard: StdUDS},
	{SID: 0x3B, Name: "WriteDataByLocalIdentifier", Standard: StdKWP, Identifier: idLocal},
	{SID: 0x3D, Name: "WriteMemoryByAddress", Standard: stdBoth, Identifier: idAddress},
	{SID: SIDTesterPresent, Name: "TesterPresent", Standard: stdBoth, SubFunction: true, SubFunctions: []Named{{0, "zeroSubFunction"}}},
	{SID: 0x83, Name: "AccessTimingParameter", Standard: StdUDS, SubFunction: true},
	{SID: 0x84, Name: "SecuredDataTransmission", Standard: StdUDS},
	{SID: 0x85, Name: "ControlDTCSetting", Standard: StdUDS, SubFunction: true, SubFunctions: []Named{{1, "on"}, {2, "off"}}},
	{SID: 0x86, Name: "ResponseOnEvent", Standard: StdUDS, SubFunction: true},
	{SID: 0x87, Name: "LinkControl", Standard: StdUDS, SubFunction: true},
}

// serviceIndex maps a SID to 1 + its row in serviceTable (0: none).
// Built once from the constant table.
var serviceIndex = func() (ix [256]uint8) {
	for i, s := range serviceTable {
		ix[s.SID] = uint8(i + 1)
	}
	return ix
}()

// Service returns the reference row of sid.
func Service(sid byte) (ServiceInfo, bool) {
	if i := serviceIndex[sid]; i > 0 {
		s := serviceTable[i-1]
		s.Response = sid + positiveOffset
		return s, true
	}
	return ServiceInfo{SID: sid}, false
}

// Services returns the reference table, by SID (a copy).
func Services() []ServiceInfo {
	out := make([]ServiceInfo, len(serviceTable))
	for i, s := range serviceTable {
		s.Response = s.SID + positiveOffset
		s.SubFunctions = slices.Clone(s.SubFunctions)
		if s.SubFunctions == nil {
			s.SubFunctions = []Named{}
		}
		out[i] = s
	}
	return out
}

// SubFunctionName names sub of service sid ("" when the table has none);
// bit 7, the suppress-positive-response bit, is not part of the value.
func SubFunctionName(sid, sub byte) string {
	s, ok := Service(sid)
	if !ok {
		return ""
	}
	v := sub &^ suppressPositiveReply
	if sid == 0x27 && v > 4 { // the table lists levels 1 and 3; every odd value asks a seed
		if v%2 == 1 {
			return fmt.Sprintf("requestSeed (level %d)", v)
		}
		return fmt.Sprintf("sendKey (level %d)", v-1)
	}
	for _, n := range s.SubFunctions {
		if n.Value == v {
			return n.Name
		}
	}
	return ""
}

// NRCInfo is one negative response code.
type NRCInfo struct {
	Code uint8
	Name string
}

// NRCs returns the negative response codes by code.
func NRCs() []NRCInfo {
	out := make([]NRCInfo, 0, len(nrcNames))
	for c, n := range nrcNames {
		out = append(out, NRCInfo{Code: c, Name: n})
	}
	slices.SortFunc(out, func(a, b NRCInfo) int { return int(a.Code) - int(b.Code) })
	return out
}

// DIDInfo is one standardised data identifier.
type DIDInfo struct {
	DID  uint16
	Name string
}

// didNames are the identifiers ISO 14229-1 Annex C reserves for ECU
// identification (0xF180–0xF19F) that testers read most. A constant table.
var didNames = map[uint16]string{
	0xF180: "bootSoftwareIdentification",
	0xF181: "applicationSoftwareIdentification",
	0xF182: "applicationDataIdentification",
	0xF183: "bootSoftwareFingerprint",
	0xF184: "applicationSoftwareFingerprint",
	0xF186: "activeDiagnosticSession",
	0xF187: "vehicleManufacturerSparePartNumber",
	0xF188: "vehicleManufacturerECUSoftwareNumber",
	0xF189: "vehicleManufacturerECUSoftwareVersionNumber",
	0xF18A: "systemSupplierIdentifier",
	0xF18B: "ECUManufacturingDate",
	0xF18C: "ECUSerialNumber",
	0xF190: "VIN",
	0xF191: "vehicleManufacturerECUHardwareNumber",
	0xF192: "systemSupplierECUHardwareNumber",
	0xF193: "systemSupplierECUHardwareVersionNumber",
	0xF194: "systemSupplierECUSoftwareNumber",
	0xF195: "systemSupplierECUSoftwareVersionNumber",
	0xF197: "systemNameOrEngineType",
	0xF198: "repairShopCodeOrTesterSerialNumber",
	0xF199: "programmingDate",
	0xF19E: "ODXFile",
}

// DIDName names a standardised data identifier, or "".
func DIDName(did uint16) string { return didNames[did] }

// DIDs returns the named data identifiers by value.
func DIDs() []DIDInfo {
	out := make([]DIDInfo, 0, len(didNames))
	for d, n := range didNames {
		out = append(out, DIDInfo{DID: d, Name: n})
	}
	slices.SortFunc(out, func(a, b DIDInfo) int { return int(a.DID) - int(b.DID) })
	return out
}
