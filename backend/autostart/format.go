package autostart

import (
	"bytes"
	"encoding/xml"
	"strings"
)

// desktopEntry is an XDG autostart entry running cmd, the window hidden
// (memtray starts in the tray).
func desktopEntry(cmd []string) []byte {
	quoted := make([]string, len(cmd))
	for i, a := range cmd {
		quoted[i] = execQuote(a)
	}
	var b strings.Builder
	b.WriteString("[Desktop Entry]\n")
	b.WriteString("Type=Application\n")
	b.WriteString("Name=memtray\n")
	b.WriteString("Comment=Long-term memory for AI coding agents\n")
	b.WriteString("Exec=" + keyFileEscape(strings.Join(quoted, " ")) + "\n")
	b.WriteString("Icon=memtray\n")
	b.WriteString("Terminal=false\n")
	b.WriteString("X-GNOME-Autostart-enabled=true\n")
	b.WriteString(marker + "=true\n")
	return []byte(b.String())
}

// execReserved are the characters that make the Desktop Entry
// Specification require an Exec argument to be quoted.
const execReserved = " \t\n\"'\\><~|&;$*?#()`"

// execQuote quotes one Exec argument (Desktop Entry Specification, "The
// Exec key"): in double quotes, with ", `, $ and \ escaped by a backslash;
// a literal % is %%.
func execQuote(a string) string {
	a = strings.ReplaceAll(a, "%", "%%")
	if a != "" && !strings.ContainsAny(a, execReserved) {
		return a
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range a {
		if strings.ContainsRune("\"`$\\", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// keyFileEscape escapes a string value of a desktop file (\\ for \).
func keyFileEscape(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }

// desktopExec reads back the argv of an entry's Exec key (nil if none).
func desktopExec(data []byte) []string {
	for _, line := range strings.Split(string(data), "\n") {
		v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "Exec=")
		if ok {
			return splitExec(keyFileUnescape(v))
		}
	}
	return nil
}

func keyFileUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 's':
				b.WriteByte(' ')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// splitExec splits an Exec value into arguments (quoting as execQuote
// writes it; %% is %).
func splitExec(s string) []string {
	var out []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			quoted, inArg = !quoted, true
		case !quoted && (c == ' ' || c == '\t'):
			if inArg {
				out = append(out, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		out = append(out, cur.String())
	}
	for i, a := range out {
		out[i] = strings.ReplaceAll(a, "%%", "%")
	}
	return out
}

// plist is a LaunchAgent that runs cmd at login, in the user's GUI session.
func plist(cmd []string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<!-- ` + marker + `: written by memtray; memtray autostart off removes it -->
<dict>
  <key>Label</key>
  <string>` + Label + `</string>
  <key>ProgramArguments</key>
  <array>
`)
	for _, a := range cmd {
		b.WriteString("    <string>")
		xml.EscapeText(&b, []byte(a))
		b.WriteString("</string>\n")
	}
	b.WriteString(`  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>ProcessType</key>
  <string>Interactive</string>
  <key>LimitLoadToSessionType</key>
  <string>Aqua</string>
</dict>
</plist>
`)
	return b.Bytes()
}

// plistArgs reads back ProgramArguments (nil if none or malformed).
func plistArgs(data []byte) []string {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	var (
		out                     []string
		lastKey, text           string
		inArgs, sawKey, inArray bool
	)
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch t := tok.(type) {
		case xml.StartElement:
			text = ""
			if t.Name.Local == "array" && sawKey {
				inArgs, inArray = true, true
			}
		case xml.CharData:
			text += string(t)
		case xml.EndElement:
			switch {
			case t.Name.Local == "key":
				lastKey = text
				sawKey = lastKey == "ProgramArguments"
			case t.Name.Local == "string" && inArgs:
				out = append(out, text)
			case t.Name.Local == "array" && inArray:
				return out
			}
		}
	}
}
