package team

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultURLEnv is the environment variable that holds the team
// database's connection string unless the configuration names another.
const DefaultURLEnv = "MEMTRAY_TEAM_URL"

// ErrInsecure is returned (wrapped) for a connection string that would
// connect to a host other than loopback or a unix socket without TLS.
var ErrInsecure = errors.New("team database: TLS is required unless the host is loopback or a unix socket (set sslmode=verify-full, or require)")

// maxURLFile bounds the file a connection string is read from.
const maxURLFile = 64 << 10

// ParseURL validates a connection string (a postgres:// URL or key=value
// pairs, as libpq and pgx accept them) and returns the pool configuration
// Open uses. Every host it may connect to (the first and any fallback,
// which is how pgx spells sslmode=prefer and multi-host strings) must use
// TLS unless it is a unix socket or a loopback address: sslmode=disable,
// allow and prefer are refused for a remote host. Errors never contain the
// password.
func ParseURL(connString string) (*pgxpool.Config, error) {
	if strings.TrimSpace(connString) == "" {
		return nil, errors.New("team database: the connection string is empty")
	}
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// pgx redacts the password from its parse errors, but a malformed
		// string may not parse far enough to find it: say only what is
		// wrong, never the string.
		return nil, fmt.Errorf("team database: invalid connection string: %s", redactedParseError(err, connString))
	}
	cc := cfg.ConnConfig
	if err := checkTLS(cc.Host, cc.TLSConfig != nil); err != nil {
		return nil, err
	}
	for _, fb := range cc.Fallbacks {
		if err := checkTLS(fb.Host, fb.TLSConfig != nil); err != nil {
			return nil, err
		}
	}
	if cc.User == "" {
		return nil, errors.New("team database: the connection string names no user (each member connects as their own role)")
	}
	return cfg, nil
}

// checkTLS applies the TLS rule to one host.
func checkTLS(host string, tls bool) error {
	if tls || Local(host) {
		return nil
	}
	return fmt.Errorf("%w: host %q", ErrInsecure, host)
}

// Local reports whether host is a unix socket directory or a loopback
// address (localhost, 127.0.0.0/8, ::1), where TLS is not required.
func Local(host string) bool {
	if strings.HasPrefix(host, "/") {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// passwordPair is a password given as a key=value pair or a URL's query
// parameter, quoted or not.
var passwordPair = regexp.MustCompile(`(?:^|[\s&?])password\s*=\s*(?:'([^']*)'|)([^\s&']*)`)

// quotedFragment is a double-quoted part of an error message.
var quotedFragment = regexp.MustCompile(`"[^"]*"`)

// redactedParseError is err's message with every non-empty password-like
// part of connString masked.
func redactedParseError(err error, connString string) string {
	msg := err.Error()
	// pgx quotes the (password-redacted) string: "cannot parse `…`: why".
	// Its redaction misses some malformed strings; drop the quote.
	if i := strings.Index(msg, "cannot parse `"); i >= 0 {
		if j := strings.LastIndex(msg, "`: "); j > i {
			msg = msg[:i] + "cannot parse it: " + msg[j+3:]
		}
	}
	// Other messages quote fragments of the input ("missing = after
	// \"…\""), which may be a password: mask every quoted fragment of it.
	msg = quotedFragment.ReplaceAllStringFunc(msg, func(q string) string {
		if inner := q[1 : len(q)-1]; len(inner) >= 4 && strings.Contains(connString, inner) {
			return `"…"`
		}
		return q
	})
	for _, secret := range secretsIn(connString) {
		if len(secret) > 0 {
			msg = strings.ReplaceAll(msg, secret, "xxxxx")
		}
	}
	return msg
}

// secretsIn returns the candidates for a password in a connection string:
// the user-info of a URL and the value of any password= pair, quoted or
// not, longest first so that a part of a longer one is masked with it.
func secretsIn(s string) []string {
	var out []string
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			userinfo := rest[:at]
			out = append(out, userinfo)
			if c := strings.Index(userinfo, ":"); c >= 0 {
				out = append(out, userinfo[c+1:])
			}
		}
	}
	for _, m := range passwordPair.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1], m[2])
	}
	// Longest first.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ReadURL returns the connection string from the environment variable
// env (DefaultURLEnv when empty) or, when that is unset, from file, which
// must not be readable or writable by group or others (0600, as ssh
// insists for keys). The configuration file itself never holds it.
func ReadURL(env, file string) (string, error) {
	if env == "" {
		env = DefaultURLEnv
	}
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		return v, nil
	}
	if file == "" {
		return "", fmt.Errorf("team database: no connection string: set $%s or team.url_file", env)
	}
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("team database: connection string file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("team database: connection string file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("team database: connection string file %s is not a regular file", file)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("team database: connection string file %s has mode %#o: it holds a password, make it 0600 (chmod 600 %s)", file, perm, file)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxURLFile+1))
	if err != nil {
		return "", fmt.Errorf("team database: connection string file: %w", err)
	}
	if len(b) > maxURLFile {
		return "", fmt.Errorf("team database: connection string file %s is larger than %d bytes", file, maxURLFile)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		return "", fmt.Errorf("team database: connection string file %s is empty", file)
	}
	return v, nil
}
