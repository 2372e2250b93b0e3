package ingest

import (
	"fmt"
	"strings"
)

// scoreUnder says that score v is under threshold thr ("0.3493 under
// 0.35"), with as many decimals (2 to 6) as it takes for the two to read
// differently: rounded to the same two decimals, "0.35 under 0.35" said
// nothing. Trailing zeros are dropped from both.
func scoreUnder(v, thr float64) string {
	var a, b string
	for d := 2; d <= 6; d++ {
		a, b = fmt.Sprintf("%.*f", d, v), fmt.Sprintf("%.*f", d, thr)
		if a != b {
			break
		}
	}
	return trimZeros(a) + " under " + trimZeros(b)
}

// trimZeros drops a decimal number's trailing zeros, keeping two decimals.
func trimZeros(s string) string {
	dot := strings.IndexByte(s, '.')
	if dot < 0 {
		return s
	}
	for len(s) > dot+3 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return s
}

// replyClassPhrase names a reply class for a sentence, with its article:
// "an acknowledgement", "a procedural reply".
func replyClassPhrase(class string) string {
	switch class {
	case classAck:
		return "an acknowledgement"
	case "":
		return "a reply"
	}
	article := "a"
	if strings.ContainsRune("aeiou", rune(class[0])) {
		article = "an"
	}
	return article + " " + class + " reply"
}
