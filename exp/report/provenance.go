package report

// Provenance records which program produced a result, how it was asked
// to, where and when, so that a file alone says where its numbers came
// from. The command fills it (cmd/gpunetsim); experiments leave it nil,
// which keeps their results, goldens and cache entries independent of
// the build, the host and the clock.
type Provenance struct {
	Program string `json:"program"` // "gpunetsim"
	// Version is the module version ("(devel)" for a build from a
	// checkout), Commit the VCS revision with "+dirty" when the checkout
	// had uncommitted changes ("unknown" when the build records none),
	// CommitTime that revision's date.
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	CommitTime string `json:"commit_time,omitempty"`
	// BuildDate is when the executable was built (its modification time).
	BuildDate string `json:"build_date"`
	GoVersion string `json:"go_version"`
	// Command is the command line, each argument quoted when it needs it.
	Command string `json:"command"`
	Host    string `json:"host"`
	// Started is when the run began (UTC, RFC 3339); WallTime how long it
	// took until its outputs were written ("2.31s").
	Started  string `json:"started"`
	WallTime string `json:"wall_time"`
}

// Pairs returns p as ordered name/value pairs, for comment lines and
// footers. A nil p has none.
func (p *Provenance) Pairs() [][2]string {
	if p == nil {
		return nil
	}
	out := [][2]string{
		{"program", p.Program}, {"version", p.Version}, {"commit", p.Commit},
	}
	if p.CommitTime != "" {
		out = append(out, [2]string{"commit time", p.CommitTime})
	}
	return append(out, [][2]string{
		{"build date", p.BuildDate}, {"go version", p.GoVersion}, {"command", p.Command},
		{"host", p.Host}, {"started", p.Started}, {"wall time", p.WallTime},
	}...)
}
