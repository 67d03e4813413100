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
INSERT INTO "session" VALUES ('ses_db429d0fcffefZYod23jsuZPRj', 'global', NULL, NULL, 'brave-island', '/work/interop/project', 'tmp/ctxfold-kilo.JI5bKQHJ/tool/project', 'New session - 2026-12-06T14:50:57.667Z', '7.7.7', NULL, 0, 0, 0, NULL, NULL, 0, 25355, 17, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"suggest","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'code', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796568657667, 1796568722710, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24bd6e79a001dN4rPhLhzNgZ1d', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568704922, 1796568722718, '{"role":"user","time":{"created":1796568704922},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bd705d3001wVo7W6sYIXEHxs', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568712659, 1796568718683, '{"parentID":"msg_24bd6e79a001dN4rPhLhzNgZ1d","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":12658,"input":12649,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568712659,"completed":1796568718643},"finish":"tool-calls"}');
INSERT INTO "message" VALUES ('msg_24bd71db5001918mo6tdsJSQtR', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568718773, 1796568721311, '{"parentID":"msg_24bd6e79a001dN4rPhLhzNgZ1d","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":12714,"input":12706,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568718773,"completed":1796568721309},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24bd6eb99001mOaGfAe5rU2VwE', 'msg_24bd6e79a001dN4rPhLhzNgZ1d', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568705951, 1796568705961, '{"type":"text","text":"\"List the files here. [[shell: ls -1]]\""}');
INSERT INTO "part" VALUES ('prt_24bd70ed0001YtbeoC5rEek5Ij', 'msg_24bd705d3001wVo7W6sYIXEHxs', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568714961, 1796568714963, '{"type":"step-start","time":{"start":1796568714599}}');
INSERT INTO "part" VALUES ('prt_24bd70ed8001dr4kAN3u0MFysb', 'msg_24bd705d3001wVo7W6sYIXEHxs', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568714968, 1796568716980, '{"type":"tool","tool":"bash","callID":"call_fake_001","state":{"status":"completed","input":{"command":"ls -1"},"output":"notes.txt\n","metadata":{"output":"notes.txt\n","exit":0,"description":"ls -1","truncated":false,"approval":{"source":"global","rule":{"permission":"bash","pattern":"*","action":"allow"}}},"title":"ls -1","time":{"start":1796568714974,"end":1796568716844}}}');
INSERT INTO "part" VALUES ('prt_24bd71926001sScoi29XFD5j6x', 'msg_24bd705d3001wVo7W6sYIXEHxs', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568717628, 1796568717722, '{"reason":"tool-calls","type":"step-finish","time":{"start":1796568714599,"end":1796568717470,"elapsed":2871},"metrics":{"generation":3.134796238244514,"source":"computed"},"tokens":{"total":12658,"input":12649,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bd72628001KyCeyUc4LlsKKt', 'msg_24bd71db5001918mo6tdsJSQtR', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568720937, 1796568720948, '{"type":"step-start","time":{"start":1796568720667}}');
INSERT INTO "part" VALUES ('prt_24bd7263d001443cxvfsQFEWW9', 'msg_24bd71db5001918mo6tdsJSQtR', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568720957, 1796568720989, '{"type":"text","text":"Done: 1 tool output(s) read.","time":{"start":1796568720957,"end":1796568720970}}');
INSERT INTO "part" VALUES ('prt_24bd7273a001VuVeI05x0iAnNQ', 'msg_24bd71db5001918mo6tdsJSQtR', 'ses_db429d0fcffefZYod23jsuZPRj', 1796568721210, 1796568721233, '{"reason":"stop","type":"step-finish","time":{"start":1796568720667,"end":1796568721209,"elapsed":542},"metrics":{"generation":14.760147601476016,"source":"computed"},"tokens":{"total":12714,"input":12706,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
