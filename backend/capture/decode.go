package capture

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
)

// newDecompressor reads a body in a Content-Encoding: gzip (x-gzip), or
// deflate (zlib-wrapped as the HTTP spec says, raw DEFLATE as some servers
// send it).
func newDecompressor(enc string, r io.Reader) (io.ReadCloser, error) {
	if enc == "gzip" || enc == "x-gzip" {
		return gzip.NewReader(r)
	}
	br := bufio.NewReader(r)
	if head, err := br.Peek(2); err == nil && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 && head[0]&0x0f == 8 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}
