package statuspage

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

//go:embed page.html
var pageHTML string

// refresh is how often the page reloads itself: a glance every few
// seconds is enough, and a refresh costs the box one Build.
const refresh = 10 * time.Second

// Page renders Status as the HTML page.
type Page struct{ t *template.Template }

// NewPage parses the embedded page.
func NewPage() (*Page, error) {
	t, err := template.New("page").Funcs(template.FuncMap{
		"chart":   LoadChart,
		"pct":     func(f float64) string { return fmt.Sprintf("%.1f%%", f*100) },
		"join":    func(s []string) string { return strings.Join(s, ", ") },
		"deref":   func(p any) any { return derefAny(p) },
		"deref64": func(p *uint64) uint64 { return *p },
		"bytes":   humanBytes,
		"dur":     func(s int64) string { return (time.Duration(s) * time.Second).String() },
	}).Parse(pageHTML)
	if err != nil {
		return nil, fmt.Errorf("status page template: %w", err)
	}
	return &Page{t: t}, nil
}

// Render writes the page for s.
func (p *Page) Render(w io.Writer, s Status) error {
	return p.t.Execute(w, struct {
		S        Status
		RefreshS int
	}{s, int(refresh / time.Second)})
}

func derefAny(p any) any {
	switch v := p.(type) {
	case *bool:
		return *v
	case *int:
		return *v
	case *float64:
		return *v
	case *int64:
		return *v
	}
	return p
}

// humanBytes prints n in binary units with one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
