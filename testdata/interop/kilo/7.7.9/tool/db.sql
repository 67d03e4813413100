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
INSERT INTO "session" VALUES ('ses_db18b017effehzL3RINQE52gNl', 'global', NULL, NULL, 'tidy-meadow', '/work/interop/project', 'tmp/ctxfold-kilo.DCEPhuLg/tool/project', 'New session - 2026-12-07T03:03:39.906Z', '7.7.9', NULL, 0, 0, 0, NULL, NULL, 0, 28897, 17, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"suggest","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'code', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796612619906, 1796612625915, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24e750d64001AzuackIQBbxFav', 'ses_db18b017effehzL3RINQE52gNl', 1796612623717, 1796612625920, '{"role":"user","time":{"created":1796612623717},"agent":"code","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24e7511fc001DSXr82xbdTzG6h', 'ses_db18b017effehzL3RINQE52gNl', 1796612624892, 1796612625500, '{"parentID":"msg_24e750d64001AzuackIQBbxFav","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":14429,"input":14420,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612624892,"completed":1796612625499},"finish":"tool-calls"}');
INSERT INTO "message" VALUES ('msg_24e751485001dNPv7p8e5P66eS', 'ses_db18b017effehzL3RINQE52gNl', 1796612625541, 1796612625806, '{"parentID":"msg_24e750d64001AzuackIQBbxFav","role":"assistant","mode":"code","agent":"code","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":14485,"input":14477,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796612625541,"completed":1796612625804},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24e750d95001vV8WQtcCaGUu0t', 'msg_24e750d64001AzuackIQBbxFav', 'ses_db18b017effehzL3RINQE52gNl', 1796612623770, 1796612623771, '{"type":"text","text":"\"List the files here. [[shell: ls -1]]\""}');
INSERT INTO "part" VALUES ('prt_24e75137d001mCmOeipLCYKzUP', 'msg_24e7511fc001DSXr82xbdTzG6h', 'ses_db18b017effehzL3RINQE52gNl', 1796612625277, 1796612625278, '{"type":"step-start","time":{"start":1796612625211}}');
INSERT INTO "part" VALUES ('prt_24e751385001IUpTQhxzVnM15i', 'msg_24e7511fc001DSXr82xbdTzG6h', 'ses_db18b017effehzL3RINQE52gNl', 1796612625285, 1796612625446, '{"type":"tool","tool":"bash","callID":"call_fake_001","state":{"status":"completed","input":{"command":"ls -1"},"output":"notes.txt\n","metadata":{"output":"notes.txt\n","exit":0,"description":"ls -1","truncated":false,"approval":{"source":"global","rule":{"permission":"bash","pattern":"*","action":"allow"}}},"title":"ls -1","time":{"start":1796612625292,"end":1796612625438}}}');
INSERT INTO "part" VALUES ('prt_24e751452001HKirsawlKqY3k1', 'msg_24e7511fc001DSXr82xbdTzG6h', 'ses_db18b017effehzL3RINQE52gNl', 1796612625490, 1796612625491, '{"reason":"tool-calls","type":"step-finish","time":{"start":1796612625211,"end":1796612625488,"elapsed":277},"metrics":{"generation":32.49097472924188,"source":"computed"},"tokens":{"total":14429,"input":14420,"output":9,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24e751553001X7ANdnui5PmXMX', 'msg_24e751485001dNPv7p8e5P66eS', 'ses_db18b017effehzL3RINQE52gNl', 1796612625747, 1796612625749, '{"type":"step-start","time":{"start":1796612625714}}');
INSERT INTO "part" VALUES ('prt_24e751557001oB4KnaaCPtCU0N', 'msg_24e751485001dNPv7p8e5P66eS', 'ses_db18b017effehzL3RINQE52gNl', 1796612625751, 1796612625756, '{"type":"text","text":"Done: 1 tool output(s) read.","time":{"start":1796612625751,"end":1796612625754}}');
INSERT INTO "part" VALUES ('prt_24e751585001mOQRMDFekz5To6', 'msg_24e751485001dNPv7p8e5P66eS', 'ses_db18b017effehzL3RINQE52gNl', 1796612625797, 1796612625798, '{"reason":"stop","type":"step-finish","time":{"start":1796612625714,"end":1796612625796,"elapsed":82},"metrics":{"generation":97.5609756097561,"source":"computed"},"tokens":{"total":14485,"input":14477,"output":8,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
