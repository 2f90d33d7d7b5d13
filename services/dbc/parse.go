package dbc

import (
	"fmt"
	"slices"
	"strings"

	einride "go.einride.tech/can/pkg/dbc"
)

// Parse reads one DBC file. name labels errors and the result. It refuses
// (with an *Error) a file over the bounds (MaxDatabaseBytes included,
// checked once the database is built), one einride cannot parse after
// the rewrites in prepare, one that defines no message, and one whose
// definitions are inconsistent (a signal outside its message, a duplicate
// id, an unresolvable multiplexer).
func Parse(name string, data []byte) (*Database, error) {
	if len(data) > MaxFileBytes {
		return nil, errorf(name, 0, "file is %d bytes, over the %d-byte limit: is it a DBC?", len(data), MaxFileBytes)
	}
	pp, err := prepare(name, data)
	if err != nil {
		return nil, err
	}
	defs, err := parseDefs(name, pp.text)
	if err != nil {
		return nil, err
	}
	db, err := build(name, pp, defs)
	if err != nil {
		return nil, err
	}
	if db.Bytes = db.footprint(); db.Bytes > MaxDatabaseBytes {
		return nil, errorf(name, 0, "the parsed database would hold about %d MiB, over the %d MiB limit (%d messages, %d signals): split it, or load only the messages you need", db.Bytes>>20, MaxDatabaseBytes>>20, len(db.Messages), db.Signals)
	}
	return db, nil
}

// parseDefs runs einride's parser, turning a panic it does not recover
// itself into an error: the file is input, not code.
func parseDefs(name string, text []byte) (defs []einride.Def, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errorf(name, 0, "parser failed: %s", cleanReason(fmt.Sprint(r)))
		}
	}()
	p := einride.NewParser(name, text)
	if perr := p.Parse(); perr != nil {
		return nil, errorf(name, perr.Position().Line, "%s", cleanReason(perr.Reason()))
	}
	return p.Defs(), nil
}

// attrs collects the attributes that decide J1939 matching.
type attrs struct {
	protocol, protocolDefault string
	frameFormatDefault        string
	frameFormat               map[einride.MessageID]string
}

func (a *attrs) j1939(id einride.MessageID) bool {
	if f, ok := a.frameFormat[id]; ok {
		return f == "J1939PG"
	}
	proto := a.protocolDefault
	if a.protocol != "" {
		proto = a.protocol
	}
	return a.frameFormatDefault == "J1939PG" || proto == "J1939"
}

func build(name string, pp *prepared, defs []einride.Def) (*Database, error) {
	db := &Database{Name: name, File: name, Notes: pp.notes, Warnings: pp.warnings, byID: map[uint32]int32{}}
	if pp.warningsLeft > 0 {
		db.Warnings = append(db.Warnings, fmt.Sprintf("%d more warnings not listed", pp.warningsLeft))
	}
	at := attrs{frameFormat: map[einride.MessageID]string{}}
	var comments []*einride.CommentDef
	var labels []*einride.ValueDescriptionsDef
	var valTypes []*einride.SignalValueTypeDef
	var spns []*einride.AttributeValueForObjectDef
	var rawIDs []einride.MessageID
	parsedLines := map[int]bool{}
	firstUnknown := 0
	for _, d := range defs {
		switch d := d.(type) {
		case *einride.MessageDef:
			parsedLines[d.Pos.Line] = true
			for _, s := range d.Signals {
				parsedLines[s.Pos.Line] = true
			}
			if einride.IsIndependentSignalsMessage(d) {
				continue // signals in no frame
			}
			m, err := buildMessage(name, pp, d)
			if err != nil {
				return nil, err
			}
			if len(db.Messages) == MaxMessages {
				return nil, errorf(name, d.Pos.Line, "more than %d messages", MaxMessages)
			}
			if db.Signals += len(m.Signals); db.Signals > MaxSignals {
				return nil, errorf(name, d.Pos.Line, "more than %d signals", MaxSignals)
			}
			key := m.ID
			if m.Extended {
				key |= extKey
			}
			if prev, dup := db.byID[key]; dup {
				return nil, errorf(name, d.Pos.Line, "message id %d is already defined at line %d", d.MessageID, db.Messages[prev].Line)
			}
			db.byID[key] = int32(len(db.Messages))
			db.Messages = append(db.Messages, m)
			rawIDs = append(rawIDs, d.MessageID)
		case *einride.CommentDef:
			comments = append(comments, d)
		case *einride.ValueDescriptionsDef:
			labels = append(labels, d)
		case *einride.SignalValueTypeDef:
			valTypes = append(valTypes, d)
		case *einride.AttributeDefaultValueDef:
			switch d.AttributeName {
			case "ProtocolType":
				at.protocolDefault = d.DefaultStringValue
			case "VFrameFormat":
				at.frameFormatDefault = d.DefaultStringValue
			}
		case *einride.AttributeValueForObjectDef:
			switch {
			case d.AttributeName == "ProtocolType" && d.ObjectType == einride.ObjectTypeUnspecified:
				at.protocol = d.StringValue
			case d.AttributeName == "VFrameFormat" && d.ObjectType == einride.ObjectTypeMessage:
				at.frameFormat[d.MessageID] = d.StringValue
			case d.AttributeName == spnAttribute && d.ObjectType == einride.ObjectTypeSignal:
				spns = append(spns, d)
			}
		case *einride.UnknownDef:
			if firstUnknown == 0 {
				firstUnknown = d.Pos.Line
			}
		}
	}
	if err := checkSkipped(name, pp.text, parsedLines); err != nil {
		return nil, err
	}
	if len(db.Messages) == 0 {
		line := firstUnknown
		if line == 0 {
			line = 1
		}
		return nil, errorf(name, line, "defines no message (no BO_ definition): this is not a DBC database, or an empty one")
	}
	if err := applyMulVals(name, db, pp.mulVals); err != nil {
		return nil, err
	}
	for i := range db.Messages {
		if err := resolveMux(name, &db.Messages[i]); err != nil {
			return nil, err
		}
	}
	if err := applyValueTypes(name, db, valTypes); err != nil {
		return nil, err
	}
	applyComments(db, comments)
	applyLabels(db, labels)
	applySPNs(db, spns)
	indexJ1939(db, rawIDs, &at)
	return db, nil
}

func buildMessage(name string, pp *prepared, d *einride.MessageDef) (Message, error) {
	if err := d.MessageID.Validate(); err != nil {
		return Message{}, errorf(name, d.Pos.Line, "%s", cleanReason(err.Error()))
	}
	if d.Size > MaxMessageBytes {
		return Message{}, errorf(name, d.Pos.Line, "message %s is %d bytes, over the %d-byte limit", d.Name, d.Size, MaxMessageBytes)
	}
	if len(d.Signals) > MaxSignalsPerMessage {
		return Message{}, errorf(name, d.Pos.Line, "message %s has %d signals, over the %d limit", d.Name, len(d.Signals), MaxSignalsPerMessage)
	}
	m := Message{
		ID: d.MessageID.ToCAN(), Extended: d.MessageID.IsExtended(), Name: string(d.Name),
		Size: int(d.Size), Transmitter: string(d.Transmitter), Line: d.Pos.Line,
		Signals: make([]Signal, 0, len(d.Signals)),
	}
	for _, s := range d.Signals {
		if slices.ContainsFunc(m.Signals, func(o Signal) bool { return o.Name == string(s.Name) }) {
			return Message{}, errorf(name, s.Pos.Line, "signal %s is defined twice in message %s", s.Name, d.Name)
		}
		if s.Size < 1 || s.Size > MaxSignalBits {
			return Message{}, errorf(name, s.Pos.Line, "signal %s is %d bits: want 1..%d", s.Name, s.Size, MaxSignalBits)
		}
		sig := Signal{
			Name: string(s.Name), Start: int(s.StartBit), Size: int(s.Size), BigEndian: s.IsBigEndian, Signed: s.IsSigned,
			Factor: s.Factor, Offset: s.Offset, Min: s.Minimum, Max: s.Maximum, Unit: s.Unit, Line: s.Pos.Line,
			Switch: s.IsMultiplexerSwitch || pp.switchLines[s.Pos.Line], Mux: -1,
		}
		if s.IsMultiplexed {
			sig.Mux = -2 // resolved in resolveMux
			sig.MuxRanges = [][2]int64{{int64(s.MultiplexerSwitch), int64(s.MultiplexerSwitch)}}
		}
		end := sig.Start + sig.Size
		if sig.BigEndian {
			sig.lin = sig.Start/8*8 + 7 - sig.Start%8
			end = sig.lin + sig.Size
		}
		if end > 8*m.Size {
			return Message{}, errorf(name, s.Pos.Line, "signal %s (start bit %d, %d bits, %s) ends outside the %d-byte message %s",
				s.Name, s.StartBit, s.Size, byteOrder(sig.BigEndian), m.Size, d.Name)
		}
		m.Signals = append(m.Signals, sig)
	}
	return m, nil
}

func byteOrder(big bool) string {
	if big {
		return "Motorola"
	}
	return "Intel"
}

// checkSkipped refuses a file in which a BO_ or SG_ line produced no
// definition: einride's skipping of an unknown statement can run into the
// next line, and a silently lost message decodes nothing.
func checkSkipped(name string, text []byte, parsed map[int]bool) error {
	line := 0
	for ln := range strings.SplitSeq(string(text), "\n") {
		line++
		f := strings.Fields(ln)
		if len(f) > 1 && (f[0] == "BO_" || f[0] == "SG_") && !parsed[line] {
			return errorf(name, line, "this %s definition was skipped by the parser (it follows a statement the parser does not know): remove or fix the statement above it", f[0])
		}
	}
	return nil
}

// applyMulVals replaces the default selection of the signals SG_MUL_VAL_
// names: their multiplexer and its value ranges.
func applyMulVals(name string, db *Database, mvs []mulVal) error {
	for _, mv := range mvs {
		key := mv.msgID // the file's own id form: extended flag included
		i, ok := db.byID[key]
		if !ok {
			return errorf(name, mv.line, "SG_MUL_VAL_ names message %d, which is not defined", mv.msgID)
		}
		m := &db.Messages[i]
		si, sw := m.SignalIndex(mv.signal), m.SignalIndex(mv.switchName)
		switch {
		case si < 0:
			return errorf(name, mv.line, "SG_MUL_VAL_ names signal %s, which message %s does not have", mv.signal, m.Name)
		case sw < 0 || !m.Signals[sw].Switch:
			return errorf(name, mv.line, "SG_MUL_VAL_ names %s as the multiplexer of %s, but it is not a multiplexer (M or mNM) of message %s", mv.switchName, mv.signal, m.Name)
		case m.Signals[si].Mux == -1:
			return errorf(name, mv.line, "SG_MUL_VAL_ names signal %s, which is not multiplexed (no m indicator)", mv.signal)
		}
		m.Signals[si].Mux = sw
		m.Signals[si].MuxRanges = mv.ranges
	}
	return nil
}

// resolveMux gives each multiplexed signal without SG_MUL_VAL_ the
// message's one plain multiplexer, checks the chains and orders
// evaluation so a multiplexer is decoded before what it selects.
func resolveMux(name string, m *Message) error {
	plain := -1
	plainCount := 0
	for i, s := range m.Signals {
		if s.Switch && s.Mux == -1 {
			plain, plainCount = i, plainCount+1
		}
	}
	for i := range m.Signals {
		s := &m.Signals[i]
		if s.Mux != -2 {
			continue
		}
		if plainCount != 1 {
			return errorf(name, s.Line, "signal %s is multiplexed, but message %s has %d top-level multiplexers and no SG_MUL_VAL_ says which one selects it",
				s.Name, m.Name, plainCount)
		}
		s.Mux = plain
	}
	depth := make([]int, len(m.Signals))
	for i := range m.Signals {
		d, j := 0, i
		for m.Signals[j].Mux >= 0 {
			j = m.Signals[j].Mux
			if d++; d > MaxMuxDepth {
				return errorf(name, m.Signals[i].Line, "signal %s: multiplexer chain is circular or deeper than %d", m.Signals[i].Name, MaxMuxDepth)
			}
		}
		depth[i] = d
	}
	m.order = make([]int, len(m.Signals))
	for i := range m.order {
		m.order[i] = i
	}
	slices.SortStableFunc(m.order, func(a, b int) int { return depth[a] - depth[b] })
	return nil
}

func applyValueTypes(name string, db *Database, vts []*einride.SignalValueTypeDef) error {
	for _, vt := range vts {
		s := findSignal(db, vt.MessageID, string(vt.SignalName))
		if s == nil {
			continue // a type for an unknown signal changes no decode
		}
		switch vt.SignalValueType {
		case einride.SignalValueTypeFloat32:
			s.Float = 32
		case einride.SignalValueTypeFloat64:
			s.Float = 64
		default:
			continue
		}
		if s.Size != s.Float {
			return errorf(name, vt.Pos.Line, "signal %s is %d bits but SIG_VALTYPE_ declares a %d-bit float", s.Name, s.Size, s.Float)
		}
	}
	return nil
}

func findSignal(db *Database, id einride.MessageID, sig string) *Signal {
	i, ok := db.byID[uint32(id)]
	if !ok {
		return nil
	}
	m := &db.Messages[i]
	if j := m.SignalIndex(sig); j >= 0 {
		return &m.Signals[j]
	}
	return nil
}

func applyComments(db *Database, cs []*einride.CommentDef) {
	for _, c := range cs {
		switch c.ObjectType {
		case einride.ObjectTypeMessage:
			if i, ok := db.byID[uint32(c.MessageID)]; ok {
				db.Messages[i].Comment = c.Comment
			}
		case einride.ObjectTypeSignal:
			if s := findSignal(db, c.MessageID, string(c.SignalName)); s != nil {
				s.Comment = c.Comment
			}
		}
	}
}

func applyLabels(db *Database, ls []*einride.ValueDescriptionsDef) {
	for _, l := range ls {
		if l.ObjectType != einride.ObjectTypeSignal && l.ObjectType != einride.ObjectTypeUnspecified {
			continue
		}
		s := findSignal(db, l.MessageID, string(l.SignalName))
		if s == nil {
			continue
		}
		s.Labels = make(map[int64]string, len(l.ValueDescriptions))
		for _, vd := range l.ValueDescriptions {
			s.Labels[int64(vd.Value)] = vd.Description
		}
	}
}

// spnAttribute is the signal attribute J1939 DBCs (Vector's J1939
// template, CSS Electronics' demo) give each signal's SPN in.
const spnAttribute = "SPN"

// applySPNs sets Signal.SPN from BA_ "SPN" SG_ lines; a value outside the
// 19-bit SPN range is noted and ignored, as is one for an unknown signal.
func applySPNs(db *Database, spns []*einride.AttributeValueForObjectDef) {
	for _, a := range spns {
		s := findSignal(db, a.MessageID, string(a.SignalName))
		if s == nil {
			continue
		}
		if a.IntValue < 1 || a.IntValue > MaxSPN {
			db.Notes = append(db.Notes, fmt.Sprintf("line %d: SPN %d of signal %s is outside 1..%d and ignored", a.Pos.Line, a.IntValue, a.SignalName, MaxSPN))
			continue
		}
		s.SPN = uint32(a.IntValue)
	}
}

// indexJ1939 marks J1939 messages and indexes those whose PGN no other
// J1939 message shares; a shared PGN matches by exact id only.
func indexJ1939(db *Database, rawIDs []einride.MessageID, at *attrs) {
	byPGN := map[uint32]int32{}
	shared := map[uint32]bool{}
	for i := range db.Messages {
		m := &db.Messages[i]
		if !m.Extended || !at.j1939(rawIDs[i]) {
			continue
		}
		m.J1939 = true
		db.J1939 = true
		p := pgnOf(m.ID)
		if _, dup := byPGN[p]; dup {
			shared[p] = true
		}
		byPGN[p] = int32(i)
	}
	for p := range shared {
		delete(byPGN, p)
		db.Notes = append(db.Notes, fmt.Sprintf("PGN %d is defined by more than one message: those match by exact id only", p))
	}
	if len(byPGN) > 0 {
		db.byPGN = byPGN
	}
}
