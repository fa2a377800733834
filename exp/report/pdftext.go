package report

import (
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// pdfCanvas is a PDF canvas whose text is converted for its fonts: the
// PDF backend embeds its fonts with the Windows-1252 code page but passes
// strings through as UTF-8, so "÷" would print as "Ã·". FillString
// re-encodes each string in Windows-1252 and spells out the characters
// that code page lacks (γ → gamma, ≤ → <=).
type pdfCanvas struct{ *vgpdf.Canvas }

// FillString implements vg.Canvas.
func (c pdfCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.Canvas.FillString(f, pt, ToWindows1252(s))
}

// cp1252High maps the characters of Windows-1252's bytes 0x80–0x9F.
var cp1252High = map[rune]byte{
	'€': 0x80, '‚': 0x82, 'ƒ': 0x83, '„': 0x84, '…': 0x85, '†': 0x86, '‡': 0x87, 'ˆ': 0x88, '‰': 0x89,
	'Š': 0x8A, '‹': 0x8B, 'Œ': 0x8C, 'Ž': 0x8E, '‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '•': 0x95,
	'–': 0x96, '—': 0x97, '˜': 0x98, '™': 0x99, 'š': 0x9A, '›': 0x9B, 'œ': 0x9C, 'ž': 0x9E, 'Ÿ': 0x9F,
}

// spelled are the characters outside Windows-1252 that results use,
// written out.
var spelled = map[rune]string{
	'α': "alpha", 'β': "beta", 'γ': "gamma", 'δ': "delta", 'Δ': "Delta", 'λ': "lambda", 'σ': "sigma",
	'π': "pi", 'ρ': "rho", 'τ': "tau", 'ω': "omega", '≤': "<=", '≥': ">=", '≠': "!=", '≈': "~",
	'→': "->", '←': "<-", '↔': "<->", '⁻': "-", '¹': "1", '³': "3", '√': "sqrt", '∞': "inf", '−': "-",
	'·': "·", '×': "×", '÷': "÷",
}

// ToWindows1252 encodes s in Windows-1252 (as a Go string of those
// bytes), characters outside it spelled out (see spelled) or "?".
func ToWindows1252(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r) // ASCII is one byte
		case r >= 0xA0 && r <= 0xFF:
			b.WriteByte(byte(r))
		default:
			if c, ok := cp1252High[r]; ok {
				b.WriteByte(c)
			} else if w, ok := spelled[r]; ok && w != string(r) {
				b.WriteString(w)
			} else {
				b.WriteByte('?')
			}
		}
	}
	return b.String()
}
