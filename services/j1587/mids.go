package j1587

// midNames are the J1587 MID assignments 128-255 (names as listed in
// grimm-co/stm32-j1708 j1708/mids.py, BSD-3-Clause). Empty: reclaimed or
// reserved.
var midNames = [256 - FirstJ1587MID]string{
	"Engine #1", "Turbocharger", "Transmission", "Power Takeoff", "Axle, Power Unit", "Axle, Trailer", "", "",
	"Brakes, Power Unit", "Brakes, Trailer #1", "Brakes, Trailer #2", "Brakes, Trailer #3", "Instrument Cluster", "Trip Recorder", "Vehicle Management System", "Fuel System",
	"Cruise Control", "Road Speed Indicator", "Cab Climate Control", "Cargo Refrigeration/Heating, Trailer", "", "", "Suspension, Power Unit", "Suspension, Trailer",
	"", "", "Diagnostic Systems, Power Unit", "Diagnostic Systems, Trailer", "", "Park Brake Controller", "Electrical Charging System", "Proximity Detector, Front",
	"Proximity Detector, Rear", "Aerodynamic Control Unit", "Vehicle Navigation Unit", "Vehicle Security", "Multiplex", "Communication Unit-Ground", "Tires, Power Unit", "Tires, Trailer",
	"Tires, Trailer #2", "Tires, Trailer #3", "Electrical", "Driver Information Center #1", "Off-board Diagnostics #1", "Engine Retarder", "Cranking/Starting System", "Engine #2",
	"Transmission, Additional", "Particulate Trap System", "Vehicle Sensors to Data Converter", "Data Logging Computer", "Off-board Diagnostics #2", "Communication Unit-Satellite", "Off-board Programming Station", "Engine #3",
	"Rear Axle Steering Controller", "Pneumatic System Controller", "Tires Control Unit", "Vehicle Management System #2", "Vehicle Management System #3", "Vehicle Head Signs", "Refrigerant Management Protection and Diagnostics", "Vehicle Location Unit-Differential Correction",
	"Front Door Status Unit", "Middle Door Status Unit", "Rear Door Status Unit", "Annunciator Unit", "Fare Collection Unit", "Passenger Counter Unit #1", "Schedule Adherence Unit", "Route Adherence Unit",
	"Environment Monitor Unit", "Vehicle Status Points Monitor Unit", "High Speed Communications Unit", "Mobile Data Terminal Unit", "Vehicle Proximity, Right Side", "Vehicle Proximity, Left Side", "Base Unit (Radio Gateway to Fixed End)", "Bridge from SAE J1708 Drivetrain Link",
	"Maintenance Printer", "Fifth Wheel Hitch Monitoring Device", "Bus Chassis Identification Unit", "Smart Card Terminal", "Mobile Data Terminal", "Vehicle Control Head Touch Screen", "Silent Alarm Unit", "Surveillance Microphone",
	"Lighting Control Administrator Unit", "Tractor/Trailer Gateway, Tractor Mounted", "Tractor/Trailer Gateway, Trailer Mounted", "Collision Avoidance Systems", "Tachograph", "Driver Information Center #2", "Driveline Retarder", "Transmission Shift Console-Primary",
	"Parking Heater", "Weighing System, Axle Group #1", "Weighing System, Axle Group #2", "Weighing System, Axle Group #3", "Weighing System, Axle Group #4", "Weighing System, Axle Group #5", "Weighing System, Axle Group #6", "Communication Unit-Cellular",
	"Safety Restraint System #1", "Intersection Preemption Emitter", "Instrument Cluster #2", "Engine Oil Control System", "Entry Assist Control #1", "Entry Assist Control #2", "Idle Adjust System", "Passenger Counter Unit #2",
	"Passenger Counter Unit #3", "Fuel Tank Monitor", "Door #4 Status Unit", "Door #5 Status Unit", "Door #6 Status Unit", "Weighing System Display / Door #7 Status Unit", "Brakes, Trailer #4 / Door #8 Status Unit", "Brakes, Trailer #5",
	"Forward Road Image Processor", "Body Controller", "Steering Column Unit", "", "", "Brake Stroke Alert Monitor, Tractor", "Safety Restraint System #2", "",
}

// MIDName names a J1587 MID; below 128 it says the layout is J1708-reserved,
// and an unassigned MID has an empty name.
func MIDName(mid byte) string {
	if mid < FirstJ1587MID {
		return "J1708 reserved"
	}
	return midNames[mid-FirstJ1587MID]
}
