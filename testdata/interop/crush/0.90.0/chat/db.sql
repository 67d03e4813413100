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
INSERT INTO "sessions" VALUES ('00000000-0000-4000-8000-000000000001', NULL, 'Fake session title', 4, 11970, 1, 0, 1796000001, 1796000000, NULL, NULL);
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
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"Hello, fake provider. Say hi."}},{"type":"finish","data":{"reason":"stop","time":0}}]', '', 1796000000, 1796000000, NULL, NULL, 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"OK."}},{"type":"finish","data":{"reason":"end_turn","time":1796000000}}]', 'fake-model', 1796000000, 1796000000, 1796000000, 'fake', 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"Second turn."}},{"type":"finish","data":{"reason":"stop","time":0}}]', '', 1796000001, 1796000001, NULL, NULL, 0);
INSERT INTO "messages" VALUES ('00000000-0000-4000-8000-000000000005', '00000000-0000-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"OK."}},{"type":"finish","data":{"reason":"end_turn","time":1796000001}}]', 'fake-model', 1796000001, 1796000001, 1796000001, 'fake', 0);
