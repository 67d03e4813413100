package report

import (
	"fmt"
	"strings"
)

// Lang is the language of user-facing system messages.
type Lang string

// The languages of the compaction messages (docs/COMPACT.md §5).
const (
	LangEN Lang = "en"
	LangZH Lang = "zh"
)

// ParseLang validates a --lang value.
func ParseLang(s string) (Lang, error) {
	switch l := Lang(strings.ToLower(strings.TrimSpace(s))); l {
	case LangEN, LangZH:
		return l, nil
	}
	return "", fmt.Errorf("unknown language %q (want en or zh)", s)
}

// LangFromLocale picks the language from the locale variables, in POSIX
// precedence (LC_ALL, LC_MESSAGES, LANG): Chinese for zh*, else English.
func LangFromLocale(getenv func(string) string) Lang {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			if strings.HasPrefix(strings.ToLower(v), "zh") {
				return LangZH
			}
			return LangEN
		}
	}
	return LangEN
}

// The four system-message variants of docs/COMPACT.md §5; automatic and manual
// compaction print the same ones.

// CompactionStarted: "Compacting context…".
func CompactionStarted(l Lang) string {
	if l == LangZH {
		return "正在压缩上下文…"
	}
	return "Compacting context…"
}

// CompactionFinished: "Context compacted: covered N older messages, X → Y
// tokens". A re-compaction, whose coverage includes what the previous
// summary covered, says how many of the N are new: "covered N older
// messages (M new), X → Y tokens".
func CompactionFinished(l Lang, covered, newly, before, after int) string {
	if l == LangZH {
		if newly < covered {
			return fmt.Sprintf("上下文已压缩：覆盖 %d 条较早消息（新增 %d 条），%d → %d tokens", covered, newly, before, after)
		}
		return fmt.Sprintf("上下文已压缩：覆盖 %d 条较早消息，%d → %d tokens", covered, before, after)
	}
	if newly < covered {
		return fmt.Sprintf("Context compacted: covered %d older messages (%d new), %d → %d tokens", covered, newly, before, after)
	}
	return fmt.Sprintf("Context compacted: covered %d older messages, %d → %d tokens", covered, before, after)
}

// CompactionFailed: "Context compaction failed: ERR" (without ERR when
// there is none).
func CompactionFailed(l Lang, errText string) string {
	if l == LangZH {
		if errText == "" {
			return "上下文压缩失败"
		}
		return "上下文压缩失败：" + errText
	}
	if errText == "" {
		return "Context compaction failed"
	}
	return "Context compaction failed: " + errText
}

// CompactionNoOp: "Context is already compacted; no older messages to fold."
func CompactionNoOp(l Lang) string {
	if l == LangZH {
		return "当前上下文已压缩，没有可折叠的旧消息。"
	}
	return "Context is already compacted; no older messages to fold."
}

// CompactionBelowTarget is the no-op of a history already within the
// retained-token target: nothing was compacted, and it may never have been,
// so docs/COMPACT.md §5's "already compacted" (reserved for a previous summary
// with nothing new after it) would mislead.
func CompactionBelowTarget(l Lang, tokens, target int) string {
	if l == LangZH {
		return fmt.Sprintf("无需压缩：历史（%d tokens）未超过保留目标（%d tokens）。", tokens, target)
	}
	return fmt.Sprintf("Nothing to compact: the history (%d tokens) is within the retained-token target (%d tokens).", tokens, target)
}

// CompactionOneTurn is the no-op of a history that is one request and its
// first reply: a long turn keeps its tail from one of its later steps
// (docs/COMPACT.md §2), but a first step has none before it to fold.
func CompactionOneTurn(l Lang) string {
	if l == LangZH {
		return "无需压缩：历史只有一个请求及其第一步回复（工具调用不会与其结果分开）；可尝试 'ctxfold render --fit' 生成能放入窗口的请求。"
	}
	return "Nothing to compact: the history is one request and its first reply (a tool call is never separated from its results); try 'ctxfold render --fit' for a request that fits."
}

// CompactionBelowThreshold is printed when --if-above did not fire: the
// context is not compacted, which is not the "already compacted" no-op of
// docs/COMPACT.md §5 (there may well be older messages to fold).
func CompactionBelowThreshold(l Lang, pct, threshold float64) string {
	if l == LangZH {
		return fmt.Sprintf("上下文占预算的 %.1f%%，低于 --if-above %g%%，未压缩。", pct, threshold)
	}
	return fmt.Sprintf("Context is at %.1f%% of the budget, below --if-above %g%%; not compacted.", pct, threshold)
}

// CompactionChanged is printed when the session changed while the summary
// was being written (not one of the four: nothing was compacted).
func CompactionChanged(l Lang, why string) string {
	if l == LangZH {
		return "压缩期间会话已变更，未写入任何内容：" + why
	}
	return "Session changed during compaction; nothing written: " + why
}
