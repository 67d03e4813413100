package report

import "testing"

func TestCompactionMessages(t *testing.T) {
	cases := []struct{ got, want string }{
		{CompactionStarted(LangEN), "Compacting context…"},
		{CompactionStarted(LangZH), "正在压缩上下文…"},
		{CompactionFinished(LangEN, 14, 14, 52626, 11679), "Context compacted: covered 14 older messages, 52626 → 11679 tokens"},
		{CompactionFinished(LangZH, 14, 14, 52626, 11679), "上下文已压缩：覆盖 14 条较早消息，52626 → 11679 tokens"},
		{CompactionFinished(LangEN, 172, 13, 21474, 14264), "Context compacted: covered 172 older messages (13 new), 21474 → 14264 tokens"},
		{CompactionFinished(LangZH, 172, 13, 21474, 14264), "上下文已压缩：覆盖 172 条较早消息（新增 13 条），21474 → 14264 tokens"},
		{CompactionFailed(LangEN, "exit status 1"), "Context compaction failed: exit status 1"},
		{CompactionFailed(LangEN, ""), "Context compaction failed"},
		{CompactionFailed(LangZH, "exit status 1"), "上下文压缩失败：exit status 1"},
		{CompactionNoOp(LangEN), "Context is already compacted; no older messages to fold."},
		{CompactionNoOp(LangZH), "当前上下文已压缩，没有可折叠的旧消息。"},
		{CompactionBelowTarget(LangEN, 900, 8000), "Nothing to compact: the history (900 tokens) is within the retained-token target (8000 tokens)."},
		{CompactionBelowTarget(LangZH, 900, 8000), "无需压缩：历史（900 tokens）未超过保留目标（8000 tokens）。"},
		{CompactionOneTurn(LangEN), "Nothing to compact: the history is one request and its first reply (a tool call is never separated from its results); try 'ctxfold render --fit' for a request that fits."},
		{CompactionOneTurn(LangZH), "无需压缩：历史只有一个请求及其第一步回复（工具调用不会与其结果分开）；可尝试 'ctxfold render --fit' 生成能放入窗口的请求。"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestLang(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want Lang
	}{
		{nil, LangEN},
		{map[string]string{"LANG": "zh_CN.UTF-8"}, LangZH},
		{map[string]string{"LANG": "zh_CN.UTF-8", "LC_ALL": "en_US.UTF-8"}, LangEN},
		{map[string]string{"LANG": "C", "LC_MESSAGES": "zh_TW"}, LangZH},
		{map[string]string{"LC_ALL": "fr_FR"}, LangEN},
	} {
		if got := LangFromLocale(env(tc.env)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.env, got, tc.want)
		}
	}
	if l, err := ParseLang(" ZH "); err != nil || l != LangZH {
		t.Errorf("ParseLang(ZH) = %q, %v", l, err)
	}
	if _, err := ParseLang("fr"); err == nil {
		t.Error("ParseLang(fr) accepted")
	}
}
