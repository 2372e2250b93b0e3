package cli

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/memtray/memtray/backend/httpapi"
)

// Commit and BuildDate are set at build time like Version (the Makefile
// passes build/version.sh's commit and date):
// -ldflags "-X github.com/memtray/memtray/backend/cli.Commit=…". Left
// unset, Build takes them from the Go toolchain's VCS stamp, if any.
var (
	Commit    = "unknown"
	BuildDate = "unknown"
)

// Build describes this binary: Version, Commit, BuildDate, the Go version
// and the platform.
func Build() httpapi.Build {
	var info *debug.BuildInfo
	if bi, ok := debug.ReadBuildInfo(); ok {
		info = bi
	}
	return build(Version, Commit, BuildDate, info)
}

// build fills what the linker left at its default from info's VCS stamp
// (vcs.revision, vcs.modified, vcs.time) and module version.
func build(version, commit, date string, info *debug.BuildInfo) httpapi.Build {
	b := httpapi.Build{Version: version, Commit: commit, BuildDate: date,
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if info == nil {
		return b
	}
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	if b.Commit == "unknown" && vcs["vcs.revision"] != "" {
		b.Commit = vcs["vcs.revision"]
		if vcs["vcs.modified"] == "true" {
			b.Commit += "-dirty"
		}
	}
	if b.BuildDate == "unknown" && vcs["vcs.time"] != "" {
		b.BuildDate = vcs["vcs.time"]
	}
	if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version // go install …@vX.Y.Z
	}
	if info.GoVersion != "" {
		b.GoVersion = info.GoVersion
	}
	return b
}

func runVersion(env *Env, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	asJSON := fs.Bool("json", false, "print as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unknown argument %q", pos[0])
	}
	b := Build()
	if *asJSON {
		return printJSON(env.Stdout, b)
	}
	fmt.Fprintf(env.Stdout, "memtray %s\ncommit:  %s\nbuilt:   %s\ngo:      %s %s/%s\n",
		b.Version, b.Commit, b.BuildDate, b.GoVersion, b.OS, b.Arch)
	return nil
}
