package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium returns the headless browser's path, skipping the test when
// there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium: .ci/run installs Debian's chromium package")
	return ""
}

// renderDOM loads page in headless Chromium and returns the DOM after its
// scripts ran, and the browser's log (console messages included).
func renderDOM(t *testing.T, browser, page string) (dom, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--window-size=1280,1000", "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+abs)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errOut.String())
	}
	return out.String(), errOut.String()
}

// scriptErrors returns the browser log lines that report a script error.
func scriptErrors(log string) []string {
	var bad []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "CONSOLE") && (strings.Contains(line, "Uncaught") || strings.Contains(line, "Error")) {
			bad = append(bad, line)
		}
	}
	return bad
}

var figuresAttr = regexp.MustCompile(`<body data-figures="(\d+)" data-figures-rendered="(\d+)" data-text-outside="(\d+)" data-height="(\d+)">`)

// TestReportRendersInChromium writes the quick report and renders it in a
// real browser: every figure is there and drawn (its SVG has a non-empty
// bounding box), every experiment has its section, and no script error is
// logged.
func TestReportRendersInChromium(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	// A fixed set of fast experiments (line plots, a bar timeline, a table
	// only): the rendering is what is tested, and the quick sizes of every
	// experiment would make this test grow with each new one.
	only := "allreduce,latency,strategies,taskspawn,ddt_put"
	if code := run([]string{"report", "--size", "quick", "--only", only, "--out", page, "--cache", filepath.Join(dir, "cache"), "-q"}, io.Discard, os.Stderr); code != 0 {
		t.Fatalf("gpunetsim report exited with %d", code)
	}
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Namespace names are not loaded; anything else with a URL would be.
	self := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", `xmlns:xlink="http://www.w3.org/1999/xlink"`, "").Replace(string(src))
	for _, ref := range []string{"http:", "https:", " src=", "@import", "url("} {
		if strings.Contains(self, ref) {
			t.Errorf("the report refers to something outside itself (%q)", ref)
		}
	}
	figures := bytes.Count(src, []byte("<figure>")) + bytes.Count(src, []byte(`<figure class="panels">`))
	if figures < 2 {
		t.Fatalf("%d figures in the report, want one per plotting experiment (allreduce, latency at least)", figures)
	}
	dom, log := renderDOM(t, browser, page)
	m := figuresAttr.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's script did not run: no figure counts on <body>\n%s", log)
	}
	if m[1] != strconv.Itoa(figures) || m[2] != m[1] {
		t.Errorf("browser found %s figures, %s drawn; the file has %d", m[1], m[2], figures)
	}
	// The figures' text keeps the width the layout measured (textLength):
	// without it the browser set the labels in its own serif face (DejaVu
	// where the Liberation fonts are not installed), wider than the layout
	// measured, and taskspawn's legend ran past the figure's edge. No font
	// travels with the page for it (an embedded one was 0.5 MB).
	if m[3] != "0" {
		t.Errorf("%s text elements reach past their figure's edge", m[3])
	}
	if n := strings.Count(string(src), "@font-face"); n != 0 {
		t.Errorf("%d @font-face rules in the page, want none", n)
	}
	// Long tables scroll in place, so a section stays a few screens tall and
	// the whole report (39 sections) can be screenshot in one piece; before,
	// taskspawn's 365-row table alone was about 8,000 px.
	sections := strings.Count(dom, "<section ")
	if h, _ := strconv.Atoi(m[4]); sections == 0 || h/sections > 2500 {
		t.Errorf("page %s px tall for %d sections at 1280 px wide: more than 2,500 px per section", m[4], sections)
	}
	for _, name := range []string{"allreduce", "latency", "strategies"} {
		if !strings.Contains(dom, "<h2>"+name+"</h2>") {
			t.Errorf("no section for %s", name)
		}
	}
	if bad := scriptErrors(log); len(bad) > 0 {
		t.Errorf("script errors logged:\n%s", strings.Join(bad, "\n"))
	}
}

// The log check above would see a script error: a page that throws one is
// caught.
func TestBrowserCheckSeesScriptErrors(t *testing.T) {
	browser := chromium(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><script>notDefined();</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, log := renderDOM(t, browser, page)
	if len(scriptErrors(log)) == 0 {
		t.Fatalf("a thrown script error was not logged:\n%s", log)
	}
}
