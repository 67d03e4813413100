CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    prompt_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens>= 0),
    cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
    updated_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    created_at INTEGER NOT NULL   -- Unix timestamp in milliseconds
, summary_message_id TEXT, todos TEXT);
INSERT INTO "sessions" VALUES ('00000000-0000-4000-8000-000000000001', NULL, 'Fake session title', 6, 12165, 8, 0, 1796000001, 1796000000, NULL, NULL);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL default '[]',
    model TEXT,
    created_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    updated_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL,  -- Unix timestamp in milliseconds
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"List the files here. [[bash: ls -1]]"}},{"type":"finish","data":{"reason":"stop","time":0}}]', '', 1796000000, 1796000000, NULL, NULL, 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000001', 'assistant', '[{"type":"tool_call","data":{"id":"toolu_fake0001","name":"bash","input":"{\"command\":\" ls -1\",\"description\":\"Scripted command\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1796000000}}]', 'fake-model', 1796000000, 1796000000, 1796000000, 'fake', 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000001', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"toolu_fake0001","name":"bash","content":"crush.json\nnotes.txt\n\n\n\u003ccwd\u003e/work/interop/project\u003c/cwd\u003e","data":"","mime_type":"","metadata":"{\"start_time\":1796000000591,\"end_time\":1796000000691,\"output\":\"crush.json\\nnotes.txt\\n\",\"description\":\"Scripted command\",\"working_directory\":\"/work/interop/project\"}","is_error":false}},{"type":"finish","data":{"reason":"stop","time":0}}]', '', 1796000000, 1796000000, NULL, NULL, 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000005', '00000000-0000-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"Tool step finished (1 result(s))."}},{"type":"finish","data":{"reason":"end_turn","time":1796000000}}]', 'fake-model', 1796000000, 1796000000, 1796000000, 'fake', 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000006', '00000000-0000-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"Thanks, that is all."}},{"type":"finish","data":{"reason":"stop","time":0}}]', '', 1796000001, 1796000001, NULL, NULL, 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000007', '00000000-0000-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"Fake reply to: Thanks, that is all."}},{"type":"finish","data":{"reason":"end_turn","time":1796000001}}]', 'fake-model', 1796000001, 1796000001, 1796000001, 'fake', 0);
