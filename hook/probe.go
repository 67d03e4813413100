package hook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// compactionMark is how a client that announces its compaction to no hook
// writes the record of one (Factory Droid 0.215: each record is one JSON
// line, this its first key; docs/INTEROP-droid.md).
var compactionMark = []byte(`{"type":"compaction_state"`)

// probeChunk is how much of the transcript's new tail is held at a time.
const probeChunk = 256 << 10

// handles says whether the dialect's hook acts on in, and whether in is a
// prompt: an event that injects a pending compaction's facts (and, for a
// client that announces no compaction, first looks for one).
func (d Dialect) handles(in Input) (relevant, prompt bool) {
	prompt = in.Event == EventUserPromptSubmit || (d.Unannounced && in.Event == EventPostToolUse)
	return prompt || in.Event == EventPreCompact || in.Event == EventPostCompact ||
		(in.Event == EventSessionStart && in.Source == "compact"), prompt
}

// idle says a prompt with no compaction pending has nothing to do: the
// common case, nothing read and no lock taken — unless the client
// announces no compaction and the transcript's new lines hold one.
func (d Dialect) idle(ctx context.Context, sp, abs string, now func() time.Time) (bool, error) {
	if !d.Unannounced {
		return true, nil
	}
	found, err := probeUnannounced(ctx, sp, abs, now)
	return !found, err
}

// probeUnannounced looks, for a dialect whose client compacts without a
// hook (Dialect.Unannounced), for a compaction record among the lines the
// transcript gained since the last probe (state.Scanned). When it finds
// one it marks a compaction pending, as PreCompact would have, and says
// so; either way it records how far it read, so every line is read once.
// Nothing appended: nothing read beyond a stat, no lock taken.
func probeUnannounced(ctx context.Context, sp, abs string, now func() time.Time) (bool, error) {
	from := loadState(sp, abs).Scanned
	end, found, err := scanTail(abs, from)
	if err != nil || end == from {
		return false, err
	}
	unlock, err := lockState(ctx, sp)
	if err != nil {
		return false, err
	}
	defer unlock()
	st := loadState(sp, abs)
	if found && !st.Pending {
		// Before stays "": the summary now active is taken unless an
		// injection of it is already recorded.
		st.Pending, st.Before, st.PendingSince = true, "", now().UTC()
	}
	if end > st.Scanned || end < from { // further on, or the file was rewritten
		st.Scanned = end
	}
	return found, st.save(sp)
}

// scanTail reads the regular file at path from offset from to its last
// complete line and reports the offset after that line and whether the
// lines read hold compactionMark at a line's start. A file shorter than
// from (rewritten by the client) is read from its start.
func scanTail(path string, from int64) (end int64, found bool, err error) {
	// The client's file is only read: a link to it is followed, but what
	// it leads to must be a regular file (not a FIFO, not /dev/zero).
	fi, err := os.Stat(path)
	if err != nil {
		return from, false, err
	}
	if !fi.Mode().IsRegular() {
		return from, false, errors.New(path + ": not a regular file")
	}
	if fi.Size() < from {
		from = 0
	}
	if fi.Size() == from {
		return from, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return from, false, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return from, false, err
	}
	// Read a piece at a time (a line longer than the buffer comes in
	// several): memory stays bounded whatever the lines' length. Only a
	// complete line counts; an unfinished last one is read again next time.
	br := bufio.NewReaderSize(io.LimitReader(f, fi.Size()-from), probeChunk)
	end, pos := from, from
	atLineStart, marked := true, false
	for {
		piece, err := br.ReadSlice('\n')
		if atLineStart {
			marked = bytes.HasPrefix(piece, compactionMark)
		}
		pos += int64(len(piece))
		if atLineStart = len(piece) > 0 && piece[len(piece)-1] == '\n'; atLineStart {
			end, found = pos, found || marked
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull), err == nil:
		case errors.Is(err, io.EOF):
			return end, found, nil
		default:
			return from, false, err
		}
	}
}
