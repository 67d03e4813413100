CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer,
          CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
INSERT INTO "session" VALUES ('ses_db4329e03ffeBrv6o4IVoUV1C2', 'global', NULL, NULL, 'jolly-mountain', '/work/interop/project', 'tmp/ctxfold-opencode.KcdLRSH7/tool/project', 'New session - 2026-12-06T14:41:20.892Z', '1.18.33', NULL, 0, 0, 0, NULL, NULL, 0, 15430, 17, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'build', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796568080892, 1796568098871, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24bcd676f001MMkmVhhnQR2L1q', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568082287, 1796568098062, '{"role":"user","time":{"created":1796568082287},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bcd7fe3001E4BSaoLR93ls3T', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568088547, 1796568097739, '{"parentID":"msg_24bcd676f001MMkmVhhnQR2L1q","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7696,"input":7687,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568088547,"completed":1796568097738},"finish":"tool-calls"}');
INSERT INTO "message" VALUES ('msg_24bcda412001OjwMBvBZeiyAQm', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568097810, 1796568098783, '{"parentID":"msg_24bcd676f001MMkmVhhnQR2L1q","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7751,"input":7743,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568097810,"completed":1796568098781},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24bcd6789001ky4ZfbU4GDhPKJ', 'msg_24bcd676f001MMkmVhhnQR2L1q', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568088443, 1796568088458, '{"type":"text","text":"\"List the files here. [[shell: ls -1]]\""}');
INSERT INTO "part" VALUES ('prt_24bcd9717001HKR1lWIjP9lIVE', 'msg_24bcd7fe3001E4BSaoLR93ls3T', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568094487, 1796568094510, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bcd973f001RZoengP8mX058R', 'msg_24bcd7fe3001E4BSaoLR93ls3T', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568094527, 1796568097551, '{"type":"tool","tool":"bash","callID":"call_fake_002","state":{"status":"completed","input":{"command":"ls -1"},"output":"notes.txt\n","metadata":{"output":"notes.txt\n","exit":0,"truncated":false},"title":"ls -1","time":{"start":1796568094571,"end":1796568097549}}}');
INSERT INTO "part" VALUES ('prt_24bcda32b001Y3544aT9nrlEO0', 'msg_24bcd7fe3001E4BSaoLR93ls3T', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568097614, 1796568097637, '{"reason":"tool-calls","type":"step-finish","tokens":{"total":7696,"input":7687,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bcda7370013bDz5tLTTymG7I', 'msg_24bcda412001OjwMBvBZeiyAQm', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568098615, 1796568098646, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bcda765001nJfHeTaWmzlJfU', 'msg_24bcda412001OjwMBvBZeiyAQm', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568098661, 1796568098710, '{"type":"text","text":"Done: 1 tool output(s) read.","time":{"start":1796568098661,"end":1796568098709}}');
INSERT INTO "part" VALUES ('prt_24bcda7c5001t1Kw7AAUezsbOI', 'msg_24bcda412001OjwMBvBZeiyAQm', 'ses_db4329e03ffeBrv6o4IVoUV1C2', 1796568098757, 1796568098761, '{"reason":"stop","type":"step-finish","tokens":{"total":7751,"input":7743,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
