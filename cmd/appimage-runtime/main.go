//go:build linux

// Command appimage-runtime is the runtime of memtray's AppImage: the ELF at
// the start of a type-2 AppImage (the "AI\x02" mark at offset 8), followed
// by a squashfs image of the AppDir. build/appimage.sh builds it and appends
// the image. When run, it finds its own file (/proc/self/exe, or
// $TARGET_APPIMAGE), reads the squashfs image after the ELF, and either
//   - mounts it read-only with FUSE at a temporary directory; or, where
//     FUSE fails, with --appimage-extract-and-run or
//     APPIMAGE_EXTRACT_AND_RUN=1,
//   - extracts it once to $XDG_CACHE_HOME/memtray-appimage/<sha256 of the
//     image>/ (later runs reuse it).
//
// Then it executes AppRun in its place (the same process: AppRun gets the
// AppImage's arguments, streams, signals and exit status) with the
// variables APPIMAGE, APPDIR, ARGV0 and OWD. The FUSE mount is served by a
// child process, which unmounts once AppRun (and whatever it started from
// the mount) is done. It is a separate program, not part of the memtray
// binary.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// version is set at build time (-X main.version=...).
var version = "dev"

const optionPrefix = "--appimage-"

const usage = `AppImage options (the first argument starting with -- is checked):
  --appimage-extract [PATTERN]  extract the AppDir (or the paths matching
                                PATTERN, and what is under them) to
                                ./squashfs-root
  --appimage-extract-and-run    extract to the cache and run from there
                                instead of mounting with FUSE (also:
                                APPIMAGE_EXTRACT_AND_RUN=1)
  --appimage-mount              mount the AppDir, print where, and wait
                                until interrupted
  --appimage-offset             print where the squashfs image starts
  --appimage-version            print this runtime's version
  --appimage-help               print this help
Every other argument goes to the application.
`

func main() {
	os.Exit(run(os.Args, os.Environ(), os.Stdout, os.Stderr))
}

// run is the runtime with its arguments and environment; it returns the
// exit code, or does not return when AppRun replaces it.
func run(args, env []string, stdout, stderr io.Writer) int {
	if len(args) == 3 && args[1] == fuseServerOption {
		return serveFUSE(args[2])
	}
	self, err := selfPath(env)
	if err != nil {
		fmt.Fprintf(stderr, "appimage: %v\n", err)
		return 1
	}
	name := filepath.Base(self)
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	opt, at := option(args)
	appArgs := args[1:]
	extractAndRun := envSet(env, "APPIMAGE_EXTRACT_AND_RUN")
	switch opt {
	case "":
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version":
		fmt.Fprintf(stdout, "memtray AppImage runtime %s (type 2, %s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return 0
	case "extract-and-run":
		extractAndRun = true
		appArgs = append(append([]string{}, args[1:at]...), args[at+1:]...)
	case "offset", "extract", "mount":
		img, err := openImage(self)
		if err != nil {
			return fail(err)
		}
		defer img.Close()
		if err := imageOption(img, opt, args[at+1:], stdout); err != nil {
			return fail(err)
		}
		return 0
	default:
		return fail(fmt.Errorf("%s%s is not supported by this runtime; see %shelp", optionPrefix, opt, optionPrefix))
	}

	owd, err := os.Getwd()
	if err != nil {
		return fail(fmt.Errorf("find the working directory: %w", err))
	}
	if !extractAndRun {
		dir, keep, err := startServer(self)
		if err == nil {
			return fail(execAppRun(dir, appArgs, appEnv(env, self, dir, args[0], owd), keep))
		}
		fmt.Fprintf(stderr, "%s: cannot mount with FUSE (%v); extracting instead (APPIMAGE_EXTRACT_AND_RUN=1 skips this attempt)\n", name, err)
	}
	img, err := openImage(self)
	if err != nil {
		return fail(err)
	}
	dir, _, err := cachedAppDir(img, cacheRoot(env))
	img.Close()
	if err != nil {
		return fail(err)
	}
	return fail(execAppRun(dir, appArgs, appEnv(env, self, dir, args[0], owd), nil))
}

// imageOption carries out --appimage-offset, --appimage-extract [PATTERN]
// and --appimage-mount on img; rest are the arguments after the option.
func imageOption(img *image, opt string, rest []string, stdout io.Writer) error {
	switch opt {
	case "offset":
		fmt.Fprintln(stdout, img.offset)
	case "extract":
		pattern := ""
		if len(rest) > 0 {
			pattern = rest[0]
		}
		match, err := matcher(pattern)
		if err != nil {
			return err
		}
		return extract(img.fs, "squashfs-root", match, stdout, "squashfs-root")
	case "mount":
		return mountAndWait(img, stdout)
	}
	return nil
}

// option returns the runtime option the arguments ask for (the name after
// --appimage-, "" for none) and its index. As in the reference runtime,
// only the first argument starting with "--" is checked, so the
// application's own options can follow.
func option(args []string) (string, int) {
	for i, a := range args {
		if i == 0 || !strings.HasPrefix(a, "--") {
			continue
		}
		if rest, ok := strings.CutPrefix(a, optionPrefix); ok {
			return rest, i
		}
		return "", 0
	}
	return "", 0
}

// selfPath returns the AppImage's own path: $TARGET_APPIMAGE when set (a
// tool that runs the runtime on another AppImage sets it), else the
// running executable.
func selfPath(env []string) (string, error) {
	if t := getenv(env, "TARGET_APPIMAGE"); t != "" {
		p, err := filepath.Abs(t)
		if err != nil {
			return "", fmt.Errorf("TARGET_APPIMAGE %q: %w", t, err)
		}
		return p, nil
	}
	p, err := os.Readlink("/proc/self/exe")
	if err != nil {
		if p, err = os.Executable(); err != nil {
			return "", fmt.Errorf("find the AppImage's own path: %w", err)
		}
	}
	return p, nil
}

// cacheRoot is where extract-and-run keeps extracted AppDirs:
// $XDG_CACHE_HOME/memtray-appimage, or ~/.cache/memtray-appimage.
func cacheRoot(env []string) string {
	base := getenv(env, "XDG_CACHE_HOME")
	if !filepath.IsAbs(base) {
		base = ""
	}
	if base == "" {
		if home := getenv(env, "HOME"); home != "" {
			base = filepath.Join(home, ".cache")
		}
	}
	if base == "" { // no home: a per-user directory in the temporary directory
		return filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d", extractCacheName, os.Getuid()))
	}
	return filepath.Join(base, extractCacheName)
}

// mountAndWait is --appimage-mount: mount, print the mount point, wait for
// SIGINT, SIGTERM or SIGHUP, unmount.
func mountAndWait(img *image, stdout io.Writer) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	m, err := mountImage(img)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, m.dir)
	<-sigs
	return m.unmount()
}

func getenv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// envSet reports whether key is set to something other than "" or "0".
func envSet(env []string, key string) bool {
	v := getenv(env, key)
	return v != "" && v != "0"
}
