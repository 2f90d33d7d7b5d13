package filter

import (
	"fmt"
	"strings"
)

// Bounds on what a client may send.
const (
	// MaxSource is the longest filter accepted; real filters are a line.
	MaxSource = 4096
	// MaxDepth bounds nesting (parentheses and not), keeping the
	// recursive-descent parser's stack small.
	MaxDepth = 32
	// MaxPattern bounds a regular expression's source.
	MaxPattern = 512
)

// Error is a compile error at a 1-based column (in bytes) of the source.
type Error struct {
	Col int
	Msg string
	Src string
}

func (e *Error) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// Pointer renders the source with a caret under the column.
func (e *Error) Pointer() string {
	return e.Src + "\n" + strings.Repeat(" ", max(e.Col-1, 0)) + "^"
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp
	tLParen
	tRParen
)

type token struct {
	kind tokKind
	text string // identifier, unquoted string, number, or operator
	col  int    // 1-based
}

func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		col := i + 1
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			toks = append(toks, token{tLParen, "(", col})
			i++
		case c == ')':
			toks = append(toks, token{tRParen, ")", col})
			i++
		case c == '"' || c == '\'':
			var sb strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != c; j++ {
				if src[j] == '\\' && j+1 < len(src) {
					j++
				}
				sb.WriteByte(src[j])
			}
			if j >= len(src) {
				return nil, &Error{Col: col, Msg: "string not closed", Src: src}
			}
			toks = append(toks, token{tString, sb.String(), col})
			i = j + 1
		case strings.ContainsRune("=!<>~", rune(c)):
			op := string(c)
			if i+1 < len(src) && (src[i+1] == '=' || (c == '!' && src[i+1] == '~')) {
				op += string(src[i+1])
			}
			switch op {
			case "==", "!=", "<", "<=", ">", ">=", "~", "!~":
			case "=":
				return nil, &Error{Col: col, Msg: `"=" is not an operator; use "=="`, Src: src}
			default:
				return nil, &Error{Col: col, Msg: fmt.Sprintf("unknown operator %q", op), Src: src}
			}
			toks = append(toks, token{tOp, op, col})
			i += len(op)
		case c == '-' || c == '.' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(src) && (src[j] == '.' || (src[j] >= '0' && src[j] <= '9')) {
				j++
			}
			if j < len(src) && isWordChar(src[j]) { // 10abc is a word, e.g. a user part
				for j < len(src) && isWordChar(src[j]) {
					j++
				}
				toks = append(toks, token{tIdent, src[i:j], col})
			} else {
				toks = append(toks, token{tNumber, src[i:j], col})
			}
			i = j
		case isWordChar(c):
			j := i
			for j < len(src) && isWordChar(src[j]) {
				j++
			}
			toks = append(toks, token{tIdent, src[i:j], col})
			i = j
		default:
			return nil, &Error{Col: col, Msg: fmt.Sprintf("unexpected character %q", c), Src: src}
		}
	}
	return append(toks, token{tEOF, "", len(src) + 1}), nil
}

func isWordChar(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c == '@' || c == ':' || c == '+' ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
