package redact

import "strings"

const (
	maxPEMBlock = 64 << 10 // a private key block longer than this is not one
	maxK8sDoc   = 256 << 10
)

// pemMarker classifies the "PRIVATE KEY" at p: part of a BEGIN or END
// armour line. It returns the marker's start and end (after the closing
// dashes).
func pemMarker(s string, p int) (begin bool, start, end int, ok bool) {
	lo := max(0, p-48)
	pre := s[lo:p]
	for _, m := range []string{"-----BEGIN ", "-----END "} {
		i := strings.LastIndex(pre, m)
		if i < 0 {
			continue
		}
		mid := pre[i+len(m):]
		good := true
		for k := 0; k < len(mid); k++ {
			if c := mid[k]; !isUpper(c) && !isDigit(c) && c != ' ' {
				good = false
				break
			}
		}
		if !good {
			continue
		}
		j := p + len("PRIVATE KEY")
		if strings.HasPrefix(s[j:], " BLOCK") {
			j += len(" BLOCK")
		}
		if !strings.HasPrefix(s[j:], "-----") || s[p:p+len("PRIVATE KEY")] != "PRIVATE KEY" {
			return false, 0, 0, false
		}
		return m == "-----BEGIN ", lo + i, j + 5, true
	}
	return false, 0, 0, false
}

// pemBody reports whether s holds enough base64 to be key material.
func pemBody(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAlnum(c) || c == '+' || c == '/' {
			n++
			if n >= 40 {
				return true
			}
		}
	}
	return false
}

// pemTruncated returns the end of a private key block whose END line is
// missing: the header line and the base64 (or armour header) lines after
// it.
func pemTruncated(s string, headerEnd int) int {
	end := headerEnd
	i := headerEnd
	lines := 0
	for i < len(s) && i-headerEnd < maxPEMBlock {
		j := strings.IndexByte(s[i:], '\n')
		line := s[i:]
		next := len(s)
		if j >= 0 {
			line = s[i : i+j]
			next = i + j + 1
		}
		t := strings.TrimSpace(line)
		switch {
		case t == "" && lines == 0 && i == headerEnd:
			// the newline right after the header
		case t == "":
			if lines > 0 {
				return end
			}
		case isBase64Line(t):
			lines++
			end = i + len(strings.TrimRight(line, " \t\r"))
		case strings.Contains(t, ": ") && lines == 0:
			// armour headers: Proc-Type, DEK-Info, Comment
		default:
			return end
		}
		i = next
	}
	return end
}

func isBase64Line(t string) bool {
	if len(t) < 16 {
		return strings.HasSuffix(t, "=") && len(t) >= 4
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !isAlnum(c) && c != '+' && c != '/' && c != '=' {
			return false
		}
	}
	return true
}

// scanPEM masks private key blocks, BEGIN line through END line, including
// indented blocks (YAML) and blocks with escaped newlines (JSON). A BEGIN
// without END masks the base64 lines that follow it.
func scanPEM(s string, hits []int, add func(span) bool) {
	pending := -1 // start of an open BEGIN marker
	pendingEnd := 0
	flushTruncated := func() {
		if pending >= 0 {
			if end := pemTruncated(s, pendingEnd); end > pendingEnd && pemBody(s[pendingEnd:end]) {
				add(span{pending, end, "private-key"})
			}
			pending = -1
		}
	}
	for _, p := range hits {
		if p+len("PRIVATE KEY") > len(s) {
			continue
		}
		begin, ms, me, ok := pemMarker(s, p)
		if !ok {
			continue
		}
		if begin {
			flushTruncated()
			pending, pendingEnd = ms, me
			continue
		}
		if pending < 0 {
			continue
		}
		if ms >= pendingEnd && ms-pendingEnd <= maxPEMBlock && pemBody(s[pendingEnd:ms]) {
			add(span{pending, me, "private-key"})
			pending = -1
			continue
		}
		flushTruncated()
	}
	flushTruncated()
}

// lineBounds returns the start and end (excluding '\n') of the line at p.
func lineBounds(s string, p int) (int, int) {
	a := strings.LastIndexByte(s[:p], '\n') + 1
	b := strings.IndexByte(s[p:], '\n')
	if b < 0 {
		return a, len(s)
	}
	return a, p + b
}

func indentOf(line string) int {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// isSecretKindLine reports a YAML line "kind: Secret" (any case, optional
// quotes).
func isSecretKindLine(line string) bool {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, `"`)
	if len(t) < len("kind:secret") || !strings.EqualFold(t[:4], "kind") {
		return false
	}
	t = strings.TrimPrefix(t[4:], `"`)
	t = strings.TrimSpace(t)
	if !strings.HasPrefix(t, ":") {
		return false
	}
	t = strings.TrimSpace(t[1:])
	t = strings.TrimSuffix(t, ",")
	t = strings.Trim(t, `"'`)
	return strings.EqualFold(t, "secret")
}

// scanK8sSecret masks the values under data: and stringData: in a YAML
// document whose kind is Secret.
func scanK8sSecret(s string, hits []int, add func(span) bool) {
	resume := 0
	ls, le := -1, -1
	for _, p := range hits {
		if p < resume {
			continue
		}
		if p > le || ls < 0 {
			ls, le = lineBounds(s, p) // once per line
		}
		if le-ls > 200 || !isSecretKindLine(s[ls:le]) {
			continue
		}
		// the YAML document around it, bounded
		lo := max(resume, ls-maxK8sDoc)
		docStart := lo
		if i := strings.LastIndex(s[lo:ls], "\n---"); i >= 0 {
			docStart = lo + i + 4
		} else if strings.HasPrefix(s[lo:], "---") && lo == 0 {
			docStart = 3
		}
		hi := min(len(s), le+maxK8sDoc)
		docEnd := hi
		if i := strings.Index(s[le:hi], "\n---"); i >= 0 {
			docEnd = le + i
		}
		resume = docEnd
		maskSecretData(s, docStart, docEnd, add)
	}
}

func maskSecretData(s string, start, end int, add func(span) bool) {
	inData := false
	dataIndent, childIndent := -1, -1
	blockIndent := -1 // indent of a key whose value is a block scalar
	for i := start; i < end; {
		j := strings.IndexByte(s[i:end], '\n')
		next := end
		le := end
		if j >= 0 {
			le = i + j
			next = le + 1
		}
		line := strings.TrimRight(s[i:le], "\r")
		t := strings.TrimSpace(line)
		ind := indentOf(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#") || strings.Contains(t, Marker):
		case blockIndent >= 0 && ind > blockIndent:
			if !strings.Contains(t, Marker) {
				add(span{i + ind, i + len(line), "k8s-secret"})
			}
		case inData && ind > dataIndent && childIndent >= 0 && ind > childIndent:
			// continuation of a multi-line value
			if !strings.Contains(t, Marker) {
				add(span{i + ind, i + len(line), "k8s-secret"})
			}
		case inData && ind > dataIndent:
			blockIndent = -1
			childIndent = ind
			if c := strings.IndexByte(t, ':'); c > 0 {
				rest := line[ind+c+1:]
				v := strings.TrimSpace(rest)
				switch v {
				case "|", "|-", "|+", ">", ">-", ">+":
					blockIndent = ind
				case "":
				default:
					if k := strings.Index(v, " #"); k >= 0 {
						v = strings.TrimSpace(v[:k])
					}
					if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
						v = v[1 : len(v)-1]
					}
					if v != "" && !isPlaceholder(v) {
						vs := i + ind + c + 1 + strings.Index(rest, v)
						add(span{vs, vs + len(v), "k8s-secret"})
					}
				}
			}
		default:
			blockIndent = -1
			inData = false
			lt := asciiLower(t)
			if lt == "data:" || lt == "stringdata:" {
				inData, dataIndent, childIndent = true, ind, -1
			}
		}
		i = next
	}
}
