-- Crush's schema as its migrations leave it at v0.90.0 (internal/db/migrations).
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    prompt_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens>= 0),
    cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
    updated_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    summary_message_id TEXT,
    todos TEXT
);
CREATE TABLE files (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    UNIQUE(path, session_id, version)
);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL default '[]',
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    provider TEXT,
    is_summary_message INTEGER DEFAULT 0 NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE INDEX idx_messages_created_at ON messages (created_at);
CREATE TABLE read_files (
    session_id TEXT NOT NULL CHECK (session_id != ''),
    path TEXT NOT NULL CHECK (path != ''),
    read_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    PRIMARY KEY (path, session_id)
);
-- A session with a tool call, its summary (Crush's compaction) and a turn after it.
INSERT INTO sessions VALUES ('0c5e0001-aaaa-4000-8000-000000000001', NULL, 'List the files', 7, 0, 40, 0.0, 1767225620, 1767225600, '0c5e0001-0000-4000-8000-000000000006', NULL);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000001', '0c5e0001-aaaa-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"List the files.\n"}}]', NULL, 1767225600, 1767225600, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000002', '0c5e0001-aaaa-4000-8000-000000000001', 'assistant', '[{"type":"reasoning","data":{"thinking":"Use ls.","signature":"","thought_signature":"","tool_id":"","responses_data":null,"started_at":1767225601,"finished_at":1767225601}},{"type":"tool_call","data":{"id":"call_1","name":"bash","input":"{\"command\":\"ls\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1767225602}}]', 'fake-model', 1767225601, 1767225602, 1767225602, 'fake', 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000003', '0c5e0001-aaaa-4000-8000-000000000001', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_1","name":"bash","content":"main.go\nREADME.md","data":"","mime_type":"","metadata":"","is_error":false}}]', NULL, 1767225603, 1767225603, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000004', '0c5e0001-aaaa-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"Two files."}},{"type":"finish","data":{"reason":"end_turn","time":1767225605}}]', 'fake-model', 1767225604, 1767225605, 1767225605, 'fake', 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000005', '0c5e0001-aaaa-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"Run a missing command."}},{"type":"shell_command","data":{"command":"pwd","output":"/work/app\n","exit_code":0}}]', NULL, 1767225606, 1767225606, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000011', '0c5e0001-aaaa-4000-8000-000000000001', 'assistant', '[{"type":"tool_call","data":{"id":"call_2","name":"bash","input":"{\"command\":\"nosuch\"}","provider_executed":false,"finished":true}},{"type":"finish","data":{"reason":"tool_use","time":1767225607}}]', 'fake-model', 1767225607, 1767225607, 1767225607, 'fake', 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000012', '0c5e0001-aaaa-4000-8000-000000000001', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_2","name":"bash","content":"nosuch: command not found","data":"","mime_type":"","metadata":"","is_error":true}}]', NULL, 1767225608, 1767225608, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000006', '0c5e0001-aaaa-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"The user listed the files (main.go, README.md) and ran a missing command.\n"}},{"type":"finish","data":{"reason":"end_turn","time":1767225610}}]', 'fake-model', 1767225609, 1767225610, 1767225610, 'fake', 1);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000007', '0c5e0001-aaaa-4000-8000-000000000001', 'user', '[{"type":"text","data":{"text":"Next question."}}]', NULL, 1767225611, 1767225611, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0001-0000-4000-8000-000000000008', '0c5e0001-aaaa-4000-8000-000000000001', 'assistant', '[{"type":"text","data":{"text":"OK."}},{"type":"finish","data":{"reason":"end_turn","time":1767225612}}]', 'fake-model', 1767225612, 1767225612, 1767225612, 'fake', 0);
-- A sub-agent session of the first (the agent tool), and a later plain chat.
INSERT INTO sessions VALUES ('0c5e0001-aaaa-4000-8000-000000000002', '0c5e0001-aaaa-4000-8000-000000000001', 'Sub-agent', 2, 10, 2, 0.0, 1767225630, 1767225625, NULL, NULL);
INSERT INTO messages VALUES ('0c5e0002-0000-4000-8000-000000000001', '0c5e0001-aaaa-4000-8000-000000000002', 'user', '[{"type":"text","data":{"text":"Find main."}}]', NULL, 1767225625, 1767225625, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0002-0000-4000-8000-000000000002', '0c5e0001-aaaa-4000-8000-000000000002', 'assistant', '[{"type":"text","data":{"text":"main.go"}},{"type":"finish","data":{"reason":"end_turn","time":1767225626}}]', 'fake-small', 1767225626, 1767225626, 1767225626, 'fake', 0);
INSERT INTO sessions VALUES ('0c5e0001-aaaa-4000-8000-000000000003', NULL, 'Hello', 2, 10, 2, 0.0, 1767225700, 1767225690, NULL, NULL);
INSERT INTO messages VALUES ('0c5e0003-0000-4000-8000-000000000001', '0c5e0001-aaaa-4000-8000-000000000003', 'user', '[{"type":"text","data":{"text":"Hello."}}]', NULL, 1767225690, 1767225690, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0003-0000-4000-8000-000000000002', '0c5e0001-aaaa-4000-8000-000000000003', 'assistant', '[{"type":"text","data":{"text":"Hi."}},{"type":"finish","data":{"reason":"end_turn","time":1767225691}}]', 'fake-model', 1767225691, 1767225691, 1767225691, 'fake', 0);
-- In the later chat: a cancelled answer (Crush does not send it), a tool call
-- that never got a result (Crush sends an error result for it) and a
-- result whose call is not in the session (Crush drops it).
INSERT INTO messages VALUES ('0c5e0003-0000-4000-8000-000000000003', '0c5e0001-aaaa-4000-8000-000000000003', 'assistant', '[{"type":"finish","data":{"reason":"canceled","time":1767225692}}]', 'fake-model', 1767225692, 1767225692, 1767225692, 'fake', 0);
INSERT INTO messages VALUES ('0c5e0003-0000-4000-8000-000000000004', '0c5e0001-aaaa-4000-8000-000000000003', 'user', '[{"type":"text","data":{"text":"Run it."}}]', NULL, 1767225693, 1767225693, NULL, NULL, 0);
INSERT INTO messages VALUES ('0c5e0003-0000-4000-8000-000000000005', '0c5e0001-aaaa-4000-8000-000000000003', 'assistant', '[{"type":"tool_call","data":{"id":"call_9","name":"bash","input":"{\"command\":\"sleep 100\"}","provider_executed":false,"finished":false}}]', 'fake-model', 1767225694, 1767225694, NULL, 'fake', 0);
INSERT INTO messages VALUES ('0c5e0003-0000-4000-8000-000000000006', '0c5e0001-aaaa-4000-8000-000000000003', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"call_gone","name":"bash","content":"orphan","data":"","mime_type":"","metadata":"","is_error":false}}]', NULL, 1767225695, 1767225695, NULL, NULL, 0);
