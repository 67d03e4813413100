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
INSERT INTO "session" VALUES ('ses_db4336269ffeLj9OFffieRD0l8', 'global', NULL, NULL, 'brave-rocket', '/work/interop/project', 'tmp/ctxfold-opencode.KcdLRSH7/chat/project', 'OK.', '1.18.33', NULL, 0, 0, 0, NULL, NULL, 0, 15390, 2, 0, 0, 0, NULL, '[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]', 'build', '{"id":"fake-model","providerID":"fake","variant":"default"}', 1796568030619, 1796568062623, NULL, NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO "message" VALUES ('msg_24bcc9f4e001L1Sym1j41SMq19', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568031054, 1796568037614, '{"role":"user","time":{"created":1796568031054},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bccb843001XICsrrzkRI5IJb', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568037443, 1796568041238, '{"parentID":"msg_24bcc9f4e001L1Sym1j41SMq19","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7686,"input":7685,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568037443,"completed":1796568041234},"finish":"stop"}');
INSERT INTO "message" VALUES ('msg_24bccfd38001Jsn25OnXmCu3na', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568055096, 1796568059835, '{"role":"user","time":{"created":1796568055096},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO "message" VALUES ('msg_24bcd0e77001cJlWLEDm0aCwic', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568059511, 1796568062517, '{"parentID":"msg_24bccfd38001Jsn25OnXmCu3na","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/work/interop/project","root":"/"},"cost":0,"tokens":{"total":7706,"input":7705,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796568059511,"completed":1796568062516},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO "part" VALUES ('prt_24bcc9f63001A2dBb686w3yItQ', 'msg_24bcc9f4e001L1Sym1j41SMq19', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568037377, 1796568037382, '{"type":"text","text":"\"Hello, fake provider. Say hi.\""}');
INSERT INTO "part" VALUES ('prt_24bccc6a1001z4yEctKXYzrL8a', 'msg_24bccb843001XICsrrzkRI5IJb', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568041121, 1796568041123, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bccc6b50011pXbJnss2DV9A4', 'msg_24bccb843001XICsrrzkRI5IJb', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568041141, 1796568041158, '{"type":"text","text":"OK.","time":{"start":1796568041141,"end":1796568041157}}');
INSERT INTO "part" VALUES ('prt_24bccc6d3001gNQatmYLKfw7Dg', 'msg_24bccb843001XICsrrzkRI5IJb', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568041184, 1796568041186, '{"reason":"stop","type":"step-finish","tokens":{"total":7686,"input":7685,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO "part" VALUES ('prt_24bccfd3b001S8ZMr6aT5KL1tB', 'msg_24bccfd38001Jsn25OnXmCu3na', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568059447, 1796568059449, '{"type":"text","text":"\"Second turn.\""}');
INSERT INTO "part" VALUES ('prt_24bcd19ef001kYq5nPyFgHD1TS', 'msg_24bcd0e77001cJlWLEDm0aCwic', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568062447, 1796568062449, '{"type":"step-start"}');
INSERT INTO "part" VALUES ('prt_24bcd19f3001KMrCD4yfQBt0KO', 'msg_24bcd0e77001cJlWLEDm0aCwic', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568062452, 1796568062478, '{"type":"text","text":"OK.","time":{"start":1796568062451,"end":1796568062477}}');
INSERT INTO "part" VALUES ('prt_24bcd1a1b001spTmVnRPkpi0Tn', 'msg_24bcd0e77001cJlWLEDm0aCwic', 'ses_db4336269ffeLj9OFffieRD0l8', 1796568062491, 1796568062495, '{"reason":"stop","type":"step-finish","tokens":{"total":7706,"input":7705,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
