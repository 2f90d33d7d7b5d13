package j1939

import "strconv"

// saNames are the preferred source addresses of industry group 0 (SAE
// J1939 Appendix B, Table B2), as Wireshark's packet-j1939.c names them,
// so the box and a Wireshark trace agree. 90–247 are not listed there:
// 128–247 depend on the industry group or are self-configurable.
var saNames = map[uint8]string{
	0: "Engine #1", 1: "Engine #2", 2: "Turbocharger", 3: "Transmission #1", 4: "Transmission #2",
	5: "Shift Console - Primary", 6: "Shift Console - Secondary", 7: "Power TakeOff - (Main or Rear)",
	8: "Axle - Steering", 9: "Axle - Drive #1", 10: "Axle - Drive #2", 11: "Brakes - System Controller",
	12: "Brakes - Steer Axle", 13: "Brakes - Drive axle #1", 14: "Brakes - Drive Axle #2",
	15: "Retarder - Engine", 16: "Retarder - Driveline", 17: "Cruise Control", 18: "Fuel System",
	19: "Steering Controller", 20: "Suspension - Steer Axle", 21: "Suspension - Drive Axle #1",
	22: "Suspension - Drive Axle #2", 23: "Instrument Cluster #1", 24: "Trip Recorder",
	25: "Passenger-Operator Climate Control #1", 26: "Alternator/Electrical Charging System",
	27: "Aerodynamic Control", 28: "Vehicle Navigation", 29: "Vehicle Security", 30: "Electrical System",
	31: "Starter System", 32: "Tractor-Trailer Bridge #1", 33: "Body Controller",
	34: "Auxiliary Valve Control or Engine Air System Valve Control", 35: "Hitch Control",
	36: "Power TakeOff (Front or Secondary)", 37: "Off Vehicle Gateway", 38: "Virtual Terminal (in cab)",
	39: "Management Computer #1", 40: "Cab Display #1", 41: "Retarder, Exhaust, Engine #1",
	42: "Headway Controller", 43: "On-Board Diagnostic Unit", 44: "Retarder, Exhaust, Engine #2",
	45: "Endurance Braking System", 46: "Hydraulic Pump Controller", 47: "Suspension - System Controller #1",
	48: "Pneumatic - System Controller", 49: "Cab Controller - Primary", 50: "Cab Controller - Secondary",
	51: "Tire Pressure Controller", 52: "Ignition Control Module #1", 53: "Ignition Control Module #2",
	54: "Seat Control #1", 55: "Lighting - Operator Controls", 56: "Rear Axle Steering Controller #1",
	57: "Water Pump Controller", 58: "Passenger-Operator Climate Control #2",
	59: "Transmission Display - Primary", 60: "Transmission Display - Secondary",
	61: "Exhaust Emission Controller", 62: "Vehicle Dynamic Stability Controller", 63: "Oil Sensor",
	64: "Suspension - System Controller #2", 65: "Information System Controller #1", 66: "Ramp Control",
	67: "Clutch/Converter Unit", 68: "Auxiliary Heater #1", 69: "Auxiliary Heater #2",
	70: "Engine Valve Controller", 71: "Chassis Controller #1", 72: "Chassis Controller #2",
	73: "Propulsion Battery Charger", 74: "Communications Unit, Cellular", 75: "Communications Unit, Satellite",
	76: "Communications Unit, Radio", 77: "Steering Column Unit", 78: "Fan Drive Controller",
	79: "Seat Control #2", 80: "Parking brake controller", 81: "Aftertreatment #1 system gas intake",
	82: "Aftertreatment #1 system gas outlet", 83: "Safety Restraint System", 84: "Cab Display #2",
	85: "Diesel Particulate Filter Controller", 86: "Aftertreatment #2 system gas intake",
	87: "Aftertreatment #2 system gas outlet", 88: "Safety Restraint System #2", 89: "Atmospheric Sensor",
	248: "File Server / Printer", 249: "Off Board Diagnostic-Service Tool #1",
	250: "Off Board Diagnostic-Service Tool #2", 251: "On-Board Data Logger",
	252: "Reserved for Experimental Use", 253: "Reserved for OEM", 254: "Null Address", 255: "GLOBAL",
}

// Source address ranges with no single name.
const (
	firstSelfConfigurable = 128 // 128–247: industry-group specific or self-configurable
	lastSelfConfigurable  = 247
)

// SAName names a source address by its preferred assignment. An address
// in 128–247 is "self-configurable" (its NAME says what it is); one in
// 90–127 that the table does not list is "reserved".
func SAName(sa uint8) string {
	if n, ok := saNames[sa]; ok {
		return n
	}
	if sa >= firstSelfConfigurable && sa <= lastSelfConfigurable {
		return "self-configurable"
	}
	return "reserved"
}

// functionNames are the industry-group-independent NAME functions 0–40
// (SAE J1939 Appendix B, Table B11; 10, "Brakes - Steer Axle", as the
// preferred address 12 has it). Functions 128–253 depend on the industry
// group and vehicle system, so a NAME with one names nothing here.
var functionNames = [...]string{
	"Engine", "Auxiliary Power Unit", "Electric Propulsion Control", "Transmission", "Battery Pack Monitor",
	"Shift Control/Console", "Power TakeOff - (Main or Rear)", "Axle - Steering", "Axle - Drive",
	"Brakes - System Controller", "Brakes - Steer Axle", "Brakes - Drive axle", "Retarder - Engine",
	"Retarder - Driveline", "Cruise Control", "Fuel System", "Steering Controller", "Suspension - Steer Axle",
	"Suspension - Drive Axle", "Instrument Cluster", "Trip Recorder", "Cab Climate Control", "Aerodynamic Control",
	"Vehicle Navigation", "Vehicle Security", "Network Interconnect ECU", "Body Controller",
	"Power TakeOff (Secondary or Front)", "Off Vehicle Gateway", "Virtual Terminal (in cab)", "Management Computer",
	"Propulsion Battery Charger", "Headway Controller", "System Monitor", "Hydraulic Pump Controller",
	"Suspension - System Controller", "Pneumatic - System Controller", "Cab Controller", "Tire Pressure Control",
	"Ignition Control Module", "Seat Control",
}

// ECUName is the one name every answer, the MQTT feed and the status
// page give a source: its claimed NAME's function and instance ("Engine
// #1" for function 0, instance 0) when the NAME has a function listed
// above, else its address's preferred assignment (SAName). n is nil when
// the source never claimed.
func ECUName(sa uint8, n *Name) string {
	if n != nil && int(n.Function) < len(functionNames) {
		return functionNames[n.Function] + " #" + strconv.Itoa(int(n.FunctionInstance)+1)
	}
	return SAName(sa)
}
