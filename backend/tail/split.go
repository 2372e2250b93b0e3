package tail

import (
	"bytes"
	"fmt"

	"github.com/memtray/memtray/backend/memory"
)

// TurnChunks cuts the content of an agent's session file into the pieces
// the agent appends between two times it may have stopped answering:
// each piece but the first begins with a line the user or the harness
// writes while the agent is idle (a prompt, Claude Code's interruption
// marker or a background task's notification), so the file as it stood
// at each Stop hook is the concatenation of the pieces up to one. The pieces hold every byte of
// data, in order; a last line without its newline stays in the last piece.
// An unknown agent is an error wrapping memory.ErrInvalid.
func TurnChunks(agent string, data []byte) ([][]byte, error) {
	fm, ok := formats[agent]
	if !ok {
		return nil, fmt.Errorf("%w: unknown agent %q (want %s or %s)", memory.ErrInvalid, agent, AgentClaudeCode, AgentCodex)
	}
	var out [][]byte
	start := 0
	for pos, end := 0, 0; pos < len(data); pos = end {
		end = lineEnd(data, pos)
		if pos > start && fm.stop(bytes.TrimSpace(data[pos:end])) {
			out = append(out, data[start:pos])
			start = pos
		}
	}
	if start < len(data) {
		out = append(out, data[start:])
	}
	return out, nil
}
